//! What a compaction leaves beside its archive (the SanBot seed's "auditable and reversible"):
//!
//! - `compact-…-N.meta.json`: who, when, which model, where the middle was in the input, the
//!   statistics and the summary text;
//! - `events.jsonl`: an append-only audit log with one JSON line per compaction attempt
//!   (`compacted`, `skipped`, `declined`, `failed`) and per prune (`pruned`);
//! - `summaries.md`: every summary of the session, appended under a heading naming its archive.
//!
//! They are written to a session directory here, or to a session on a store
//! ([`super::records::Records`] chooses). None of these may stop a compaction: a failure to write them is a warning. Below the
//! threshold nothing is written at all (SPEC §2: "below it … writes nothing").

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{
    create_private_dir, meta_name_for, parse_archive_name, rfc3339, timestamp_to_rfc3339,
    with_session_lock, write_new_file,
};
use crate::model::added;

/// The per-session audit log: one JSON object per line, appended, never rewritten.
pub const EVENTS_FILE: &str = "events.jsonl";
/// The per-session cumulative summary file.
pub const SUMMARIES_FILE: &str = "summaries.md";

pub(crate) fn write_meta(dir: &Path, archive_name: &str, text: &str) -> io::Result<()> {
    let name = meta_name_for(archive_name)
        .ok_or_else(|| io::Error::other(format!("{archive_name} is not an archive name")))?;
    write_new_file(dir, &name, text.as_bytes()).map(|_| ())
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

/// Appends one event to the session's `events.jsonl`: `{"time", "event", …fields}`.
pub(crate) fn append_event(dir: &Path, event: &str, fields: Map<String, Value>) -> io::Result<()> {
    let mut line = Map::new();
    line.insert("time".into(), json!(now()));
    line.insert("event".into(), json!(event));
    line.extend(fields);
    let mut text = serde_json::to_string(&Value::Object(line)).map_err(io::Error::other)?;
    text.push('\n');
    create_private_dir(dir)?;
    with_session_lock(dir, |_| append(dir, EVENTS_FILE, &text))
}

/// Appends a summary under `## <createdAt> — <archive>` to the session's `summaries.md`.
pub(crate) fn append_summary(
    dir: &Path,
    archive_name: Option<&str>,
    summary: &str,
) -> io::Result<()> {
    let text = summary_text(archive_name, summary);
    create_private_dir(dir)?;
    with_session_lock(dir, |_| append(dir, SUMMARIES_FILE, &text))
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

/// Appends `text` to `dir/name` with one `write` on an `O_APPEND` descriptor (created 0600, a
/// planted symlink refused). Callers hold the session lock, so lines from other threads and
/// processes never interleave even where `O_APPEND` alone would not guarantee it.
pub(crate) fn append(dir: &Path, name: &str, text: &str) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
        // O_NONBLOCK: a FIFO planted at the name fails at once instead of blocking compaction.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut file = options.open(dir.join(name))?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!("{name} is not a regular file")));
    }
    file.write_all(text.as_bytes())?;
    file.sync_data()
}
