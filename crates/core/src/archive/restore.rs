//! Restoring: the full conversation rebuilt from a compacted one (rollback, the SanBot seed's
//! section 5.2), and whether a summary is the library's (its session's records name it). Fed by
//! an [`ArchiveSource`]: a session on any storage ([`super::session::SessionSource`]).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{
    parse_archive_name, KEPT_ORIGINALS_KEY, MESSAGES_KEY, SHORTENED_KEY, THINKING_REMOVED_KEY,
};
use crate::base::error::ValidationError;
use crate::model::added;
use crate::model::piece::Restored;
use crate::plan::offload;

/// Why a history operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum HistoryError {
    /// An invalid argument (session id, retention): the caller's mistake.
    Invalid(ValidationError),
    /// A summary message names an archive that is not in the session directory.
    ArchiveNotFound(String),
    /// A summary message names something that is not an archive file name (e.g. a path
    /// reaching outside the session directory); it is never opened.
    InvalidReference(String),
    /// An archive cannot be used: not a JSON array, a symlink, or archives naming each other.
    InvalidArchive(String),
    /// Reading or removing files failed.
    Io(io::Error),
}

impl HistoryError {
    /// A stable code for callers: `INVALID_ARGUMENT`, `ARCHIVE_NOT_FOUND`,
    /// `INVALID_ARCHIVE_REFERENCE`, `INVALID_ARCHIVE` or `IO_ERROR`.
    pub fn code(&self) -> &'static str {
        match self {
            HistoryError::Invalid(_) => "INVALID_ARGUMENT",
            HistoryError::ArchiveNotFound(_) => "ARCHIVE_NOT_FOUND",
            HistoryError::InvalidReference(_) => "INVALID_ARCHIVE_REFERENCE",
            HistoryError::InvalidArchive(_) => "INVALID_ARCHIVE",
            HistoryError::Io(_) => "IO_ERROR",
        }
    }
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::Invalid(e) => e.fmt(f),
            HistoryError::ArchiveNotFound(m)
            | HistoryError::InvalidReference(m)
            | HistoryError::InvalidArchive(m) => f.write_str(m),
            HistoryError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HistoryError {}

impl From<ValidationError> for HistoryError {
    fn from(e: ValidationError) -> Self {
        HistoryError::Invalid(e)
    }
}

impl From<io::Error> for HistoryError {
    fn from(e: io::Error) -> Self {
        HistoryError::Io(e)
    }
}

/// An archive as read back: the messages it holds, and the originals of the kept messages its
/// compaction changed (both empty in an archive that is a plain array: those written by
/// `persistMessages`, by `offloadToolResults`, by a compaction that changed no kept message,
/// and every archive of the layout before one compaction took one number).
#[derive(Debug, Default)]
pub(crate) struct ArchiveBody {
    pub messages: Vec<Value>,
    pub thinking_removed: Vec<Value>,
    pub shortened: Vec<Value>,
}

impl ArchiveBody {
    /// Reads an archive's JSON; `path` says which archive in errors.
    pub(crate) fn parse(bytes: &[u8], path: &str) -> Result<ArchiveBody, HistoryError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            HistoryError::InvalidArchive(format!("archive {path} is not valid JSON: {e}"))
        })?;
        let not_an_archive = || {
            HistoryError::InvalidArchive(format!(
                "archive {path} is not a JSON array of messages, nor an object with a \"{MESSAGES_KEY}\" array"
            ))
        };
        let mut object = match value {
            Value::Array(messages) => {
                return Ok(ArchiveBody {
                    messages,
                    ..ArchiveBody::default()
                })
            }
            Value::Object(object) => object,
            _ => return Err(not_an_archive()),
        };
        let Some(Value::Array(messages)) = object.remove(MESSAGES_KEY) else {
            return Err(not_an_archive());
        };
        let mut kept = match object.remove(KEPT_ORIGINALS_KEY) {
            None => Map::new(),
            Some(Value::Object(kept)) => kept,
            Some(_) => {
                return Err(HistoryError::InvalidArchive(format!(
                    "archive {path}: \"{KEPT_ORIGINALS_KEY}\" is not an object"
                )))
            }
        };
        let mut list = |key: &str| match kept.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(list)) => Ok(list),
            Some(_) => Err(HistoryError::InvalidArchive(format!(
                "archive {path}: \"{KEPT_ORIGINALS_KEY}.{key}\" is not an array of messages"
            ))),
        };
        Ok(ArchiveBody {
            thinking_removed: list(THINKING_REMOVED_KEY)?,
            shortened: list(SHORTENED_KEY)?,
            messages,
        })
    }
}

/// Where [`restore_from`] reads archives: a session directory, or a session on a store.
pub(crate) trait ArchiveSource {
    /// The archive `name` (an archive file name, already checked).
    fn read_archive(&self, name: &str) -> Result<ArchiveBody, HistoryError>;
    /// The archive whose metadata holds exactly this summary text.
    fn find_by_summary(&self, content: &str) -> Option<String>;
    /// The metadata of the archive `name` (an archive file name, already checked), if it is
    /// there and readable.
    fn read_meta(&self, name: &str) -> Option<Value>;
    /// Where the archives are, for messages.
    fn describe(&self) -> String;
}

// Whether the session's records name a message, by what `ArchiveSource` reads (the rule is
// [`super::provenance`]'s; it lives here, beside the trait, because restore reads it too).

/// The field of the archive metadata that records the identity of the message standing for the
/// archive.
pub const IDENTITY_FIELD: &str = "summaryMessageSha256";

/// The archive file name a summary or notice names on its first line, if it is one.
fn named_archive(message: &Value) -> Option<&str> {
    let path = added::summary_archive(message)?;
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path).trim();
    parse_archive_name(name).map(|_| name)
}

/// Whether the metadata `meta` records `message` as the one that stood for its archive.
pub(crate) fn meta_names(meta: &Value, message: &Value) -> bool {
    if let Some(recorded) = meta.get(IDENTITY_FIELD) {
        return recorded.as_str().is_some_and(|hex| {
            added::summary_identity_hex(message).is_some_and(|own| own.eq_ignore_ascii_case(hex))
        });
    }
    // Metadata of an earlier version: the whole text of the summary as the result held it.
    let Some(recorded) = meta.get("summary").and_then(Value::as_str) else {
        return false;
    };
    let Some(text) = added::summary_text(message) else {
        return false;
    };
    if recorded.is_empty() {
        return added::is_notice(message);
    }
    let base = added::text_without_thinking_line(text);
    recorded == text
        || added::text_without_thinking_line(recorded) == base
        || (added::native_summary(message).is_some()
            && added::text_without_thinking_line(recorded).ends_with(base))
}

/// Whether the records of the session `source` reads name `message` as the library's.
pub(crate) fn recorded_in(source: &dyn ArchiveSource, message: &Value) -> bool {
    if !added::is_summary_message(message) {
        return false;
    }
    match named_archive(message) {
        Some(name) => source
            .read_meta(name)
            .is_some_and(|meta| meta_names(&meta, message)),
        // A summary naming no archive (its originals were not archived, or its first line was
        // changed): the metadata holding exactly its text, as `restoreMessages` has always
        // found it.
        None => added::summary_text(message)
            .and_then(|text| source.find_by_summary(text))
            .is_some(),
    }
}

/// Rebuilds the full conversation from a compacted list: every summary message of the library
/// (one the session's records name, see [`super::provenance`]: a message that merely starts
/// like a summary is the caller's, and stays as it is) is replaced by the messages of the
/// archive it names, and summaries inside those archives (earlier compactions) are expanded in
/// turn, so the result
/// equals the conversation before the first compaction plus everything added since. Notices of
/// the strategies without a summary ([`added::notice_header`]) are summaries here too; a
/// selective compaction's notice also stands for the kept and cleared messages after it
/// ([`added::notice_following`]), which its archive holds in their original form, so those
/// are skipped.
///
/// Archives are looked up by file name in the session only — whatever
/// directory the summary's path names — so a moved or relatively named directory still works
/// and a crafted summary cannot make this read anything else: a name that is not
/// `compact-<timestamp>-<n>.json` is refused ([`HistoryError::InvalidReference`]), and a
/// symlink at an archive's name is not followed. When a summary names no archive (its first
/// line was changed), the archive is found through the metadata whose `summary` is exactly the
/// message's content. A summary whose archive is missing fails with
/// [`HistoryError::ArchiveNotFound`]: a partial restore would silently lose messages.
///
/// This is that rule over any [`ArchiveSource`]; [`super::session::restore_messages`] reads a session's.
pub(crate) fn restore_from(
    messages: &[Value],
    source: &dyn ArchiveSource,
) -> Result<Vec<Restored>, HistoryError> {
    let mut lists = Lists {
        source,
        read: HashMap::new(),
    };
    let mut out = Vec::with_capacity(messages.len());
    // An explicit stack of archives being expanded (instead of recursion), so a long chain of
    // compactions cannot overflow the thread's stack; it also detects archives naming each other.
    // Each frame also says how many of the messages after its notice stand for part of its
    // archive (a selective compaction's kept and cleared messages): once the frame is done,
    // that many of the following messages — wherever they are, in an enclosing archive or in
    // the list — are skipped, since the archive already gave them back in their original form.
    // The kept messages after a summary whose thinking was removed get their originals back
    // from the summary's thinking line ([`KeptOriginals`]), on the level the summary is on.
    let mut frames: Vec<Frame> = Vec::new();
    let mut top_kept: Option<KeptOriginals> = None;
    let mut skip = 0usize;
    for (index, message) in messages.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        let place = format!("messages[{index}]");
        if !recorded_in(source, message) {
            place_kept(&mut top_kept, &mut out, || {
                Ok(match unshortened(message, &mut lists, &place)? {
                    Some(original) => Restored::Archived(original),
                    None => Restored::Original(index),
                })
            })?;
            continue;
        }
        flush(&mut top_kept, &mut out);
        frames.push(Frame::open(message, &mut lists, &place)?);
        while let Some(frame) = frames.last_mut() {
            let Some(item) = frame.items.next() else {
                let Some(mut done) = frames.pop() else { break };
                flush(&mut done.kept, &mut out);
                skip += done.following;
                let parent = match frames.last_mut() {
                    Some(parent) => &mut parent.kept,
                    None => &mut top_kept,
                };
                *parent = KeptOriginals::of(&done.summary, &mut lists, &done.place)?;
                continue;
            };
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let place = format!("a message of {}", frame.name);
            if !recorded_in(source, &item) {
                place_kept(&mut frame.kept, &mut out, || {
                    Ok(Restored::Archived(
                        unshortened(&item, &mut lists, &place)?.unwrap_or(item),
                    ))
                })?;
                continue;
            }
            flush(&mut frame.kept, &mut out);
            let next = Frame::open(&item, &mut lists, &place)?;
            if frames.iter().any(|open| open.name == next.name) {
                return Err(HistoryError::InvalidArchive(format!(
                    "{place} names {}, which is already being restored (the archives name each other)",
                    next.name
                )));
            }
            frames.push(next);
        }
    }
    flush(&mut top_kept, &mut out);
    Ok(out)
}

/// An archive being expanded in place of the summary (or notice) that names it.
struct Frame {
    name: String,
    items: std::vec::IntoIter<Value>,
    /// How many messages after the notice its archive already gives back.
    following: usize,
    /// The summary, for its thinking line once the frame is done.
    summary: Value,
    place: String,
    /// The originals of the kept messages after a summary among this archive's items.
    kept: Option<KeptOriginals>,
}

impl Frame {
    fn open(summary: &Value, lists: &mut Lists<'_>, place: &str) -> Result<Frame, HistoryError> {
        let name = archive_of(summary, lists.source, place)?;
        Ok(Frame {
            items: lists.open(&name)?.into_iter(),
            name,
            following: added::notice_following(summary),
            summary: summary.clone(),
            place: place.to_string(),
            kept: None,
        })
    }
}

/// A list of an archive that the originals of changed kept messages are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum List {
    /// The archive's messages: in the layout before one compaction took one number, the
    /// originals had an archive of their own (and `offloadToolResults` still writes one).
    Messages,
    /// `keptOriginals.thinkingRemoved` of the compaction's archive.
    ThinkingRemoved,
    /// `keptOriginals.shortened` of the compaction's archive.
    Shortened,
}

/// The lists that changed kept messages point into, each archive read once per restore: every
/// shortened message of a compaction names the same archive, which also holds the (possibly
/// large) messages the compaction replaced, so those are kept only when they are what was
/// asked for.
struct Lists<'a> {
    source: &'a dyn ArchiveSource,
    read: HashMap<(String, List), Rc<Vec<Value>>>,
}

impl Lists<'_> {
    /// The messages of the archive `name`, to expand in place of its summary; its kept
    /// originals are kept for the summary's thinking line and the shortened messages after it.
    fn open(&mut self, name: &str) -> Result<Vec<Value>, HistoryError> {
        Ok(self.read_body(name)?.messages)
    }

    fn get(&mut self, name: &str, list: List) -> Result<Rc<Vec<Value>>, HistoryError> {
        let key = (name.to_string(), list);
        if let Some(found) = self.read.get(&key) {
            return Ok(found.clone());
        }
        let messages = self.read_body(name)?.messages;
        if list == List::Messages {
            self.read.insert(key.clone(), Rc::new(messages));
        }
        Ok(self.read[&key].clone())
    }

    /// Reads the archive `name`, keeping its kept originals.
    fn read_body(&mut self, name: &str) -> Result<ArchiveBody, HistoryError> {
        let mut body = self.source.read_archive(name)?;
        for (list, originals) in [
            (
                List::ThinkingRemoved,
                std::mem::take(&mut body.thinking_removed),
            ),
            (List::Shortened, std::mem::take(&mut body.shortened)),
        ] {
            self.read
                .entry((name.to_string(), list))
                .or_insert_with(|| Rc::new(originals));
        }
        Ok(body)
    }
}

/// How a list is named in messages.
fn list_label(list: List, name: &str) -> String {
    match list {
        List::Messages => name.to_string(),
        List::ThinkingRemoved => format!("{KEPT_ORIGINALS_KEY}.{THINKING_REMOVED_KEY} of {name}"),
        List::Shortened => format!("{KEPT_ORIGINALS_KEY}.{SHORTENED_KEY} of {name}"),
    }
}

/// The originals of the kept messages whose thinking a compaction removed, by their position
/// after the summary (counting the messages left out, which held only thinking).
struct KeptOriginals {
    /// (position, left out, original), in order.
    entries: std::collections::VecDeque<(usize, bool, Value)>,
    /// The position of the next message on this level.
    position: usize,
}

impl KeptOriginals {
    fn of(
        summary: &Value,
        lists: &mut Lists<'_>,
        place: &str,
    ) -> Result<Option<KeptOriginals>, HistoryError> {
        let Some(line) = added::thinking_line(summary) else {
            return Ok(None);
        };
        let Some(archive) = line.archive else {
            return Ok(None);
        };
        let name = archive_name_of(archive, &format!("{place} is a summary that"))?;
        let list = if line.kept_originals {
            List::ThinkingRemoved
        } else {
            List::Messages
        };
        let originals = lists.get(&name, list)?;
        if originals.len() != line.kept.len() {
            return Err(HistoryError::InvalidArchive(format!(
                "{place} names {} kept messages whose thinking was removed, but {} holds {}",
                line.kept.len(),
                list_label(list, &name),
                originals.len()
            )));
        }
        let entries = line
            .kept
            .into_iter()
            .zip(originals.iter().cloned())
            .map(|((position, left_out), original)| (position, left_out, original))
            .collect();
        Ok(Some(KeptOriginals {
            entries,
            position: 0,
        }))
    }
}

/// Puts the next message of a level: first the originals of messages left out at this position,
/// then the original of this message when its thinking was removed, else `current()`.
fn place_kept(
    kept: &mut Option<KeptOriginals>,
    out: &mut Vec<Restored>,
    current: impl FnOnce() -> Result<Restored, HistoryError>,
) -> Result<(), HistoryError> {
    let Some(k) = kept else {
        out.push(current()?);
        return Ok(());
    };
    while k
        .entries
        .front()
        .is_some_and(|(position, left_out, _)| *left_out && *position == k.position)
    {
        if let Some((_, _, original)) = k.entries.pop_front() {
            out.push(Restored::Archived(original));
        }
        k.position += 1;
    }
    let changed = k
        .entries
        .front()
        .is_some_and(|(position, left_out, _)| !*left_out && *position == k.position);
    match changed.then(|| k.entries.pop_front()).flatten() {
        Some((_, _, original)) => out.push(Restored::Archived(original)),
        None => out.push(current()?),
    }
    k.position += 1;
    Ok(())
}

/// The end of a level: the originals of messages left out after its last message.
fn flush(kept: &mut Option<KeptOriginals>, out: &mut Vec<Restored>) {
    if let Some(k) = kept.take() {
        out.extend(
            k.entries
                .into_iter()
                .filter(|(_, left_out, _)| *left_out)
                .map(|(_, _, original)| Restored::Archived(original)),
        );
    }
}

/// The original of a message the fit step shortened (offload), following shortenings of
/// shortened messages; `None` when `message` was not shortened.
fn unshortened(
    message: &Value,
    lists: &mut Lists<'_>,
    place: &str,
) -> Result<Option<Value>, HistoryError> {
    let mut current: Option<Value> = None;
    let mut seen: Vec<(String, List, usize)> = Vec::new();
    loop {
        let reference = match offload::original_of(current.as_ref().unwrap_or(message)) {
            Some(reference) => reference,
            None => return Ok(current),
        };
        let archive = reference.archive.unwrap_or_default();
        let name = archive_name_of(archive, place)?;
        let list = if reference.kept_originals {
            List::Shortened
        } else {
            List::Messages
        };
        let item = reference.item;
        if seen
            .iter()
            .any(|(n, l, i)| *n == name && *l == list && *i == item)
        {
            return Err(HistoryError::InvalidArchive(format!(
                "{place} is a shortened message whose originals name each other ({name})"
            )));
        }
        let archived = lists.get(&name, list)?;
        let Some(original) = archived.get(item) else {
            return Err(HistoryError::InvalidArchive(format!(
                "{place} is a shortened message naming message {item} of {}, which holds {} messages",
                list_label(list, &name),
                archived.len()
            )));
        };
        current = Some(original.clone());
        seen.push((name, list, item));
    }
}

/// The archive file name in a reference (a path), refused when it is not one.
fn archive_name_of(reference: &str, place: &str) -> Result<String, HistoryError> {
    // The last path component, whatever the separator (archives written on Windows).
    let name = reference
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(reference)
        .trim();
    if parse_archive_name(name).is_none() {
        return Err(HistoryError::InvalidReference(format!(
            "{place} names {reference:?}, which is not an archive file name \
             (compact-<timestamp>-<sequence>.json); refusing to read it"
        )));
    }
    Ok(name.to_string())
}

/// The archive file name a summary message stands for.
fn archive_of(
    message: &Value,
    dir: &dyn ArchiveSource,
    place: &str,
) -> Result<String, HistoryError> {
    match added::summary_archive(message) {
        Some(reference) => archive_name_of(reference, &format!("{place} is a summary that")),
        None => {
            let content = message.get("content").and_then(Value::as_str).unwrap_or("");
            dir.find_by_summary(content).ok_or_else(|| {
                HistoryError::ArchiveNotFound(format!(
                    "{place} is a summary whose originals were not archived (no archive named, and no \
                     metadata in {} holds this summary); it cannot be restored",
                    dir.describe()
                ))
            })
        }
    }
}
