//! What a compaction leaves beside its archive (the SanBot seed's "auditable and reversible"):
//!
//! - `compact-…-N.meta.json`: who, when, which model, where the middle was in the input, the
//!   statistics and the summary text;
//! - `events.jsonl`: an append-only audit log with one JSON line per compaction attempt
//!   (`compacted`, `skipped`, `declined`, `failed`) and per prune (`pruned`);
//! - `summaries.md`: every summary of the session, appended under a heading naming its archive.
//!
//! None of these may stop a compaction: a failure to write them is a warning. Below the
//! threshold nothing is written at all (SPEC §2: "below it … writes nothing").

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{
    create_private_dir, meta_name_for, parse_archive_name, rfc3339, session_dir,
    timestamp_to_rfc3339, with_session_lock, write_new_file,
};
use crate::compact::{CompactOptions, CompactOutcome, CompactStats};
use crate::error::ErrorCode;
use crate::prompt;

/// The per-session audit log: one JSON object per line, appended, never rewritten.
pub const EVENTS_FILE: &str = "events.jsonl";
/// The per-session cumulative summary file.
pub const SUMMARIES_FILE: &str = "summaries.md";

/// A half-open range of message indices (`end` excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IndexRange {
    pub start: usize,
    pub end: usize,
}

/// The content of `compact-…-N.meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveMeta {
    /// The format of this file (1).
    pub version: u32,
    pub session_id: String,
    pub sequence: u64,
    /// When the archive was written (RFC 3339, UTC; the instant of the file name).
    pub created_at: String,
    /// The archive's file name (in the same directory).
    pub archive: String,
    /// The summarizer (`anthropic`, `openai`, `extractive`, `custom`).
    pub provider: Option<String>,
    pub model: Option<String>,
    pub head_count: usize,
    pub middle_count: usize,
    pub tail_count: usize,
    /// Where the archived messages were in the list given to that compaction.
    pub middle: IndexRange,
    /// Tokens the trigger saw, and the threshold.
    pub tokens: usize,
    pub threshold: usize,
    pub stats: CompactStats,
    pub attempts: u32,
    /// The whole content of the summary message that replaced the middle.
    pub summary: String,
}

/// Records a finished compaction call: metadata and summary file when it compacted, and one
/// audit line for every outcome except "below the threshold" (not compacted, no error), which
/// writes nothing. Failures become warnings on the outcome.
pub(crate) fn record_outcome(options: &CompactOptions, outcome: &mut CompactOutcome) {
    let (event, code) = if outcome.compacted {
        ("compacted", None)
    } else {
        match &outcome.error {
            None => return,
            Some(error) => (
                match error.code {
                    ErrorCode::Declined => "declined",
                    ErrorCode::NothingToCompact => "skipped",
                    _ => "failed",
                },
                Some(error.code.as_str()),
            ),
        }
    };
    let records = Records::of(options);
    let archive_name = outcome
        .archive_path
        .as_ref()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(str::to_string);
    let mut problems: Vec<String> = Vec::new();

    let mut fields = Map::new();
    // A compaction whose result is still over the threshold says so here too.
    let code = code.or_else(|| outcome.error.as_ref().map(|e| e.code.as_str()));
    if let Some(code) = code {
        fields.insert("code".into(), json!(code));
        fields.insert(
            "reason".into(),
            json!(outcome.error.as_ref().map(|e| e.message.as_str())),
        );
    }
    fields.insert("tokens".into(), json!(outcome.trigger_tokens));
    fields.insert("threshold".into(), json!(outcome.threshold_tokens));
    if outcome.compacted {
        fields.insert("archive".into(), json!(archive_name));
        fields.insert(
            "sequence".into(),
            json!(archive_name
                .as_deref()
                .and_then(parse_archive_name)
                .map(|(_, s)| s)),
        );
        fields.insert("stats".into(), json!(outcome.stats));
        if let Some(offload) = &outcome.offload_archive_path {
            fields.insert(
                "offloadArchive".into(),
                json!(offload.file_name().and_then(|n| n.to_str())),
            );
            fields.insert("offloaded".into(), json!(outcome.offloaded.len()));
        }
        if let Some(thinking) = &outcome.thinking_archive_path {
            fields.insert(
                "thinkingArchive".into(),
                json!(thinking.file_name().and_then(|n| n.to_str())),
            );
            fields.insert(
                "transformations".into(),
                json!(outcome.transformations.len()),
            );
        }
    }
    if outcome.provider.is_some() {
        fields.insert("provider".into(), json!(outcome.provider));
        fields.insert("model".into(), json!(outcome.model));
        fields.insert("attempts".into(), json!(outcome.attempts));
    }
    if !outcome.warnings.is_empty() {
        fields.insert("warnings".into(), json!(outcome.warnings));
    }

    if outcome.compacted {
        if let (Some(name), Some(meta)) = (archive_name.as_deref(), build_meta(options, outcome)) {
            if let Err(e) = records.meta(name, &meta) {
                problems.push(format!("could not write the metadata of {name}: {e}"));
            }
        }
        if let Some(summary) = &outcome.summary {
            if let Err(e) = records.summary(archive_name.as_deref(), summary) {
                problems.push(format!("could not append to {SUMMARIES_FILE}: {e}"));
            }
        }
    }
    if let Err(e) = records.event(event, fields) {
        problems.push(format!("could not append to {EVENTS_FILE}: {e}"));
    }

    // When the archive itself could not be written, the result already carries a warning about
    // that directory; the audit failing there too is the same problem, so it is only logged.
    let archive_failed = (outcome.compacted && outcome.archive_path.is_none())
        || outcome
            .error
            .as_ref()
            .is_some_and(|e| e.code == ErrorCode::ArchiveFailed);
    for problem in problems {
        if archive_failed {
            tracing::debug!("{problem}");
        } else {
            tracing::warn!("{problem}");
            outcome.warnings.push(problem);
        }
    }
}

/// Records a compaction the caller aborted (its `signal` fired).
pub(crate) fn record_aborted(options: &CompactOptions) {
    let mut fields = Map::new();
    fields.insert("code".into(), json!("ABORTED"));
    fields.insert(
        "reason".into(),
        json!("the caller aborted the compaction (signal)"),
    );
    if let Err(e) = Records::of(options).event("failed", fields) {
        tracing::warn!("could not append to {EVENTS_FILE}: {e}");
    }
}

/// Where a session's records go: its directory, or its session on a store
/// ([`crate::store::session`]: one object per event and per summary).
enum Records<'a> {
    Dir(std::path::PathBuf),
    Store(&'a crate::store::ArchiveStore, &'a str),
}

impl<'a> Records<'a> {
    fn of(options: &'a CompactOptions) -> Records<'a> {
        match &options.archive_store {
            Some(store) => Records::Store(store, &options.session_id),
            None => Records::Dir(session_dir(&options.output_dir, &options.session_id)),
        }
    }

    fn meta(&self, archive_name: &str, meta: &ArchiveMeta) -> io::Result<()> {
        match self {
            Records::Dir(dir) => write_meta(dir, archive_name, meta),
            Records::Store(store, session) => {
                crate::store::session::write_meta(store, session, archive_name, meta_text(meta)?)
            }
        }
    }

    fn summary(&self, archive_name: Option<&str>, summary: &str) -> io::Result<()> {
        match self {
            Records::Dir(dir) => append_summary(dir, archive_name, summary),
            Records::Store(store, session) => crate::store::session::append_summary(
                store,
                session,
                archive_name,
                summary_text(archive_name, summary),
            ),
        }
    }

    fn event(&self, event: &str, fields: Map<String, Value>) -> io::Result<()> {
        match self {
            Records::Dir(dir) => append_event(dir, event, fields),
            Records::Store(store, session) => {
                crate::store::session::append_event(store, session, event, fields)
            }
        }
    }
}

fn build_meta(options: &CompactOptions, outcome: &CompactOutcome) -> Option<ArchiveMeta> {
    let path = outcome.archive_path.as_ref()?;
    let name = path.file_name()?.to_str()?;
    let (timestamp, sequence) = parse_archive_name(name)?;
    let plan = outcome.partition?;
    let total = outcome.stats.retained_message_count
        + outcome.stats.compacted_message_count
        + outcome.stats.removed_message_count;
    Some(ArchiveMeta {
        version: 1,
        session_id: options.session_id.clone(),
        sequence,
        created_at: timestamp_to_rfc3339(timestamp).unwrap_or_else(|| timestamp.to_string()),
        archive: name.to_string(),
        provider: outcome.provider.clone(),
        model: outcome.model.clone(),
        head_count: plan.head_len,
        middle_count: plan.tail_start - plan.head_len,
        tail_count: total.saturating_sub(plan.tail_start),
        middle: IndexRange {
            start: plan.head_len,
            end: plan.tail_start,
        },
        tokens: outcome.trigger_tokens,
        threshold: outcome.threshold_tokens,
        stats: outcome.stats,
        attempts: outcome.attempts,
        summary: outcome.summary.clone().unwrap_or_default(),
    })
}

fn write_meta(dir: &Path, archive_name: &str, meta: &ArchiveMeta) -> io::Result<()> {
    let name = meta_name_for(archive_name)
        .ok_or_else(|| io::Error::other(format!("{archive_name} is not an archive name")))?;
    write_new_file(dir, &name, meta_text(meta)?.as_bytes()).map(|_| ())
}

fn meta_text(meta: &ArchiveMeta) -> io::Result<String> {
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
fn append_summary(dir: &Path, archive_name: Option<&str>, summary: &str) -> io::Result<()> {
    let text = summary_text(archive_name, summary);
    create_private_dir(dir)?;
    with_session_lock(dir, |_| append(dir, SUMMARIES_FILE, &text))
}

/// A summary under `## <createdAt> — <archive>` (the summary message's body only).
fn summary_text(archive_name: Option<&str>, summary: &str) -> String {
    let (created_at, label) = match archive_name.and_then(|n| Some((n, parse_archive_name(n)?))) {
        Some((name, (timestamp, _))) => (
            timestamp_to_rfc3339(timestamp).unwrap_or_else(now),
            name.to_string(),
        ),
        None => (now(), "not archived".to_string()),
    };
    // The summary message's first line only says what the message is; the body is the summary.
    let body = summary
        .strip_prefix(prompt::SUMMARY_PREFIX)
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
