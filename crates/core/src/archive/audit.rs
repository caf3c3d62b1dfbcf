//! What a compaction leaves beside its archive (the SanBot seed's "auditable and reversible"):
//!
//! - `compact-…-N.meta.json`: who, when, which model, where the middle was in the input, the
//!   statistics and the summary text;
//! - the audit events: one JSON object per compaction attempt (`compacted`, `skipped`,
//!   `declined`, `failed`) and per prune (`pruned`);
//! - the summaries: every summary of the session, under a heading naming its archive.
//!
//! Events and summaries are only ever added to. On disk they are files appended to under the
//! session's lock (`events.jsonl`, one line per event, and `summaries.md`); objects cannot be
//! appended to, so on a store each is an object of its own whose name lists in the order it was
//! written (`events/<instant>-<random>.json`, `summaries/<instant>-<archive>-<random>.md`), and
//! none is lost to a concurrent writer.
//!
//! None of these may stop a compaction: a failure to write them is a warning. Below the
//! threshold nothing is written at all (SPEC §2: "below it … writes nothing").

use std::io;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::restore::HistoryError;
use super::store::fs::LOCK_FILE;
use super::store::{ArchiveStore, StoreError};
use super::{
    instant_name, meta_name_for, parse_archive_name, random_suffix, rfc3339, timestamp_to_rfc3339,
    validate_session_id,
};
use crate::model::added;

/// The per-session audit log on disk: one JSON object per line, appended, never rewritten.
pub const EVENTS_FILE: &str = "events.jsonl";
/// The per-session cumulative summary file on disk.
pub const SUMMARIES_FILE: &str = "summaries.md";
/// The directory of a session's audit events on a store, one object per event.
pub const EVENTS_DIR: &str = "events";
/// The directory of a session's summaries on a store, one object per summary.
pub const SUMMARIES_DIR: &str = "summaries";

/// Writes an archive's metadata beside it (create-only: a metadata file is never replaced).
pub(crate) fn write_meta(
    store: &ArchiveStore,
    session_id: &str,
    archive_name: &str,
    text: String,
) -> io::Result<()> {
    let name = meta_name_for(archive_name)
        .ok_or_else(|| io::Error::other(format!("{archive_name} is not an archive name")))?;
    store
        .put_new(&store.key(&[session_id, &name]), text.into_bytes())
        .map_err(io::Error::from)
}

pub(crate) fn meta_text(meta: &impl Serialize) -> io::Result<String> {
    let mut text = serde_json::to_string_pretty(meta).map_err(io::Error::other)?;
    text.push('\n');
    Ok(text)
}

/// The current time for audit lines: RFC 3339 with milliseconds.
fn now() -> String {
    rfc3339(time::OffsetDateTime::now_utc(), true)
}

/// Adds `text` to a session's record: appended to the file `file` on disk (under the session's
/// lock, so records of other threads and processes never interleave), or the object
/// `<dir>/<name>` on a store (create-only, with a name of its own).
pub(crate) fn add_record(
    store: &ArchiveStore,
    session_id: &str,
    file: &str,
    dir: &str,
    name: String,
    text: String,
) -> io::Result<()> {
    match store.disk() {
        Some(disk) => disk.with_lock(&store.session_key(session_id), LOCK_FILE, |_| {
            disk.append(&store.key(&[session_id, file]), text.as_bytes())
        }),
        None => store
            .put_new(&store.key(&[session_id, dir, &name]), text.into_bytes())
            .map_err(io::Error::from),
    }
}

/// What a session's record holds: the file `file` on disk, the objects under `dir` on a store
/// (oldest first); none when there is no record.
pub(crate) fn read_record(
    store: &ArchiveStore,
    session_id: &str,
    file: &str,
    dir: &str,
) -> Result<Vec<Vec<u8>>, StoreError> {
    if store.disk().is_some() {
        return Ok(store
            .get(&store.key(&[session_id, file]))?
            .into_iter()
            .collect());
    }
    // Listed in key order, which is the order the records were written in.
    let keys = store
        .list(&store.key(&[session_id, dir]), true)?
        .into_iter()
        .map(|o| o.key)
        .collect();
    let mut chunks = Vec::new();
    for read in store.get_many(keys) {
        chunks.extend(read?);
    }
    Ok(chunks)
}

/// Records one event: `{"time", "event", …fields}`.
pub(crate) fn append_event(
    store: &ArchiveStore,
    session_id: &str,
    event: &str,
    fields: Map<String, Value>,
) -> io::Result<()> {
    let mut line = Map::new();
    line.insert("time".into(), json!(now()));
    line.insert("event".into(), json!(event));
    line.extend(fields);
    let mut text = serde_json::to_string(&Value::Object(line)).map_err(io::Error::other)?;
    text.push('\n');
    let name = format!("{}-{}.json", instant_name(), random_suffix());
    add_record(store, session_id, EVENTS_FILE, EVENTS_DIR, name, text)
}

/// A session's audit events, oldest first. Lines that are not JSON objects (a torn write) are
/// skipped; a session without events has none.
pub fn read_events(store: &ArchiveStore, session_id: &str) -> Result<Vec<Value>, HistoryError> {
    validate_session_id(session_id)?;
    let chunks = read_record(store, session_id, EVENTS_FILE, EVENTS_DIR)
        .map_err(|e| HistoryError::Io(e.into()))?;
    Ok(chunks
        .iter()
        .flat_map(|chunk| {
            String::from_utf8_lossy(chunk)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter_map(|line| match serde_json::from_str::<Value>(&line) {
            Ok(event @ Value::Object(_)) => Some(event),
            _ => None,
        })
        .collect())
}

/// Records a summary under `## <createdAt> — <archive>`.
pub(crate) fn append_summary(
    store: &ArchiveStore,
    session_id: &str,
    archive_name: Option<&str>,
    summary: &str,
) -> io::Result<()> {
    let label = archive_name
        .and_then(|n| n.strip_suffix(".json"))
        .unwrap_or("not-archived");
    let name = format!("{}-{label}-{}.md", instant_name(), random_suffix());
    let text = summary_text(archive_name, summary);
    add_record(store, session_id, SUMMARIES_FILE, SUMMARIES_DIR, name, text)
}

/// A summary under `## <createdAt> — <archive>` (the summary message's body only).
pub(crate) fn summary_text(archive_name: Option<&str>, summary: &str) -> String {
    let (created_at, label) = match archive_name.and_then(|n| Some((n, parse_archive_name(n)?))) {
        Some((name, (timestamp, _))) => (
            timestamp_to_rfc3339(timestamp).unwrap_or_else(now),
            name.to_string(),
        ),
        None => (now(), "not archived".to_string()),
    };
    // The summary message's first line only says what the message is; the body is the summary.
    let body = summary
        .strip_prefix(added::SUMMARY_PREFIX)
        .map(|rest| rest.split_once('\n').map_or("", |(_, body)| body))
        .unwrap_or(summary)
        .trim();
    format!("## {created_at} — {label}\n\n{body}\n\n")
}
