//! A session's archives on a store: the same operations as on disk (`crate::archive`) over
//! the layout in the module docs of [`crate::archive::store`].
//!
//! What is guaranteed when many agents write one session at once, on any number of machines:
//! - an archive's sequence number is unique: it is taken by a conditional create of the
//!   archive object itself, so two writers can never both own a name, and nothing is ever
//!   overwritten (a loser moves on to the next number);
//! - an archive is listed only once it is complete: a single PUT is atomic on every store, so
//!   a failed or interrupted upload leaves no object; the metadata is written after it, and an
//!   archive without metadata is still listed (with `metaPath: null`), as on disk;
//! - every audit event, summary and memory fragment is its own object with a unique name:
//!   none is lost to a concurrent writer.
//!
//! Not guaranteed: the order of sequence numbers between machines follows who won each
//! conditional create, not the clocks; the timestamps in names come from each writer's clock;
//! and two compactions extracting the same memory line at the same moment may both record it.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};

use super::{ArchiveStore, StoreError};
use crate::archive::{
    self, meta_name_for, parse_archive_name, parse_meta_name, rfc3339, timestamp_now,
    timestamp_to_datetime, timestamp_to_rfc3339, validate_session_id, Archive, ArchiveBody,
    ArchiveFile, ArchiveInfo, ArchiveSource, HistoryError, PruneOptions, PruneReport, Restored,
};
use crate::base::error::ValidationError;
use crate::carry::memory::{Extracted, Memory, EXTRACTED_DIR};

/// The directory of a session's audit events, one object per event.
pub const EVENTS_DIR: &str = "events";
/// The directory of a session's summaries, one object per summary.
pub const SUMMARIES_DIR: &str = "summaries";
/// The directory of sequence-number claims: `sequences/<n>` is created (create-only) before
/// archive `n` is written, so two writers can never both take `n` — even in different seconds,
/// when their archive names (which hold the timestamp) differ.
pub const SEQUENCES_DIR: &str = "sequences";
/// The object remembering the highest sequence number a prune removed, so numbering continues.
pub const LAST_SEQUENCE: &str = "last-sequence";

/// Metadata and archives larger than this are not read when listing.
const MAX_META_BYTES: usize = 16 * 1024 * 1024;

fn io_error(e: StoreError) -> io::Error {
    e.into()
}

fn history_error(e: StoreError) -> HistoryError {
    HistoryError::Io(e.into())
}

fn invalid_session(e: ValidationError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
}

/// The last segment of a key.
fn name_of(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// `YYYYMMDDTHHMMSS.mmmZ` now: fixed width, so names starting with it list in time order.
fn instant_name() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}.{:03}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.millisecond()
    )
}

fn random_suffix() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// The highest sequence number of the session: its archives' and claims' (a claim whose archive
/// failed is a gap not to reuse), or the one a prune recorded.
pub fn highest_sequence(store: &ArchiveStore, session_id: &str) -> Result<u64, StoreError> {
    let dir = store.session_key(session_id);
    let archives = store
        .list(&dir, true)?
        .iter()
        .filter_map(|o| parse_archive_name(name_of(&o.key)).map(|(_, n)| n))
        .max()
        .unwrap_or(0);
    let claims = store
        .list(&store.key(&[session_id, SEQUENCES_DIR]), true)?
        .iter()
        .filter_map(|o| name_of(&o.key).parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let listed = archives.max(claims);
    let recorded = store
        .get(&store.key(&[session_id, LAST_SEQUENCE]))?
        .and_then(|bytes| String::from_utf8(bytes).ok()?.trim().parse().ok())
        .unwrap_or(0);
    Ok(listed.max(recorded))
}

/// Persists `middle` as the session's next archive: the highest number found plus one, claimed
/// with a conditional create of `sequences/<n>` (when another writer has it, the next number),
/// then the archive itself, also create-only. A claim whose archive could not be written stays:
/// the number is skipped (a gap), never handed out twice.
pub fn persist_messages(
    store: &ArchiveStore,
    middle: &[Value],
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive(store, &Archive::of(middle), session_id)
}

/// Persists what one compaction archives (its replaced messages and the originals of the kept
/// messages it changed) as the session's next archive, under one claimed number, as
/// [`persist_messages`] does.
pub fn persist_archive(
    store: &ArchiveStore,
    archive: &Archive<'_>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    validate_session_id(session_id).map_err(invalid_session)?;
    let bytes = archive.to_json_bytes();
    let mut sequence = highest_sequence(store, session_id).map_err(io_error)? + 1;
    for _ in 0..1_000 {
        let timestamp = timestamp_now();
        let name = format!("compact-{timestamp}-{sequence}.json");
        // The claim names its archive and this writer (a random tag), so that a writer whose
        // retried claim finds the key taken recognises only its own claim (`put_new`).
        let claim = format!("{name} {}\n", random_suffix()).into_bytes();
        let claim_key = store.key(&[session_id, SEQUENCES_DIR, &sequence.to_string()]);
        match store.put_new(&claim_key, claim) {
            Ok(()) => {}
            Err(StoreError::AlreadyExists) => {
                sequence += 1;
                continue;
            }
            Err(e) => return Err(io_error(e)),
        }
        match store.put_new(&store.key(&[session_id, &name]), bytes.clone()) {
            Ok(()) => {
                return Ok(ArchiveFile {
                    path: PathBuf::from(store.display_path(session_id, &name)),
                    sequence,
                    timestamp,
                })
            }
            // Something that is not ours has the name (written outside this library): keep the
            // claim and take the next number.
            Err(StoreError::AlreadyExists) => sequence += 1,
            Err(e) => return Err(io_error(e)),
        }
    }
    Err(io::Error::other(
        "could not find a free archive sequence number",
    ))
}

// ---------------------------------------------------------------------------------------------
// Records: metadata, audit events, summaries, extracted memory

/// Writes an archive's metadata beside it (create-only: a metadata object is never replaced).
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
        .map_err(io_error)
}

/// Records one audit event as its own object, `events/<instant>-<random>.json`.
pub(crate) fn append_event(
    store: &ArchiveStore,
    session_id: &str,
    event: &str,
    fields: Map<String, Value>,
) -> io::Result<()> {
    let mut line = Map::new();
    line.insert(
        "time".into(),
        json!(rfc3339(time::OffsetDateTime::now_utc(), true)),
    );
    line.insert("event".into(), json!(event));
    line.extend(fields);
    let mut text = serde_json::to_string(&Value::Object(line)).map_err(io::Error::other)?;
    text.push('\n');
    let name = format!("{}-{}.json", instant_name(), random_suffix());
    store
        .put_new(
            &store.key(&[session_id, EVENTS_DIR, &name]),
            text.into_bytes(),
        )
        .map_err(io_error)
}

/// The session's audit events, oldest first (what `events.jsonl` holds on disk).
pub fn read_events(store: &ArchiveStore, session_id: &str) -> Result<Vec<Value>, HistoryError> {
    validate_session_id(session_id)?;
    // Listed in key order, which is the order the events were written in.
    let keys: Vec<String> = store
        .list(&store.key(&[session_id, EVENTS_DIR]), true)
        .map_err(history_error)?
        .into_iter()
        .map(|o| o.key)
        .collect();
    let mut events = Vec::with_capacity(keys.len());
    for read in store.get_many(keys) {
        if let Some(bytes) = read.map_err(history_error)? {
            if let Ok(event) = serde_json::from_slice::<Value>(&bytes) {
                events.push(event);
            }
        }
    }
    Ok(events)
}

/// Records a summary as its own object, `summaries/<instant>-<archive stem>.md`.
pub(crate) fn append_summary(
    store: &ArchiveStore,
    session_id: &str,
    archive_name: Option<&str>,
    text: String,
) -> io::Result<()> {
    let label = archive_name
        .and_then(|n| n.strip_suffix(".json"))
        .unwrap_or("not-archived");
    let name = format!("{}-{label}-{}.md", instant_name(), random_suffix());
    store
        .put_new(
            &store.key(&[session_id, SUMMARIES_DIR, &name]),
            text.into_bytes(),
        )
        .map_err(io_error)
}

/// Records what is new in `memory`: one object per kind and compaction,
/// `extracted/<kind>/<instant>-<random>.md`, holding only lines no earlier object of that kind
/// has (so repeated compactions never duplicate a line, as on disk).
pub fn write_memory(
    store: &ArchiveStore,
    session_id: &str,
    memory: &Memory,
) -> io::Result<Extracted> {
    validate_session_id(session_id).map_err(invalid_session)?;
    let mut counts = [0usize; 4];
    let instant = instant_name();
    for (n, (file, title, lines)) in memory.files().into_iter().enumerate() {
        if lines.is_empty() {
            continue;
        }
        let kind = file.trim_end_matches(".md");
        let dir = store.key(&[session_id, EXTRACTED_DIR, kind]);
        let mut existing: HashSet<String> = HashSet::new();
        let keys = store
            .list(&dir, true)
            .map_err(io_error)?
            .into_iter()
            .map(|o| o.key)
            .collect();
        for read in store.get_many(keys) {
            if let Some(bytes) = read.map_err(io_error)? {
                existing.extend(
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .filter_map(|l| l.strip_prefix("- "))
                        .map(|l| l.trim().to_string()),
                );
            }
        }
        let mut text = format!("# {title}\n\n");
        for line in lines.iter().filter(|l| !existing.contains(l.trim())) {
            text.push_str("- ");
            text.push_str(line);
            text.push('\n');
            counts[n] += 1;
        }
        if counts[n] > 0 {
            let name = format!("{instant}-{}.md", random_suffix());
            store
                .put_new(&format!("{dir}/{name}"), text.into_bytes())
                .map_err(io_error)?;
        }
    }
    Ok(Extracted {
        decisions: counts[0],
        facts: counts[1],
        preferences: counts[2],
        runtime: counts[3],
        dir: PathBuf::from(store.display_path(session_id, EXTRACTED_DIR)),
    })
}

// ---------------------------------------------------------------------------------------------
// History: list, restore, prune

fn parse_json_object(bytes: &[u8]) -> Option<Value> {
    if bytes.len() > MAX_META_BYTES {
        return None;
    }
    serde_json::from_slice(bytes).ok()
}

/// The session's archives, by sequence: only archive objects count (a metadata object
/// without its archive, an event or a summary is not one). Each archive is read to count its
/// messages, as on disk.
pub fn list_archives(
    store: &ArchiveStore,
    session_id: &str,
) -> Result<Vec<ArchiveInfo>, HistoryError> {
    validate_session_id(session_id)?;
    let objects = store
        .list(&store.session_key(session_id), true)
        .map_err(history_error)?;
    let metas: HashSet<&str> = objects
        .iter()
        .map(|o| name_of(&o.key))
        .filter(|n| parse_meta_name(n).is_some())
        .collect();
    let archives: Vec<_> = objects
        .iter()
        .filter_map(|object| {
            let name = name_of(&object.key);
            let (timestamp, sequence) = parse_archive_name(name)?;
            let meta_name = meta_name_for(name).filter(|m| metas.contains(m.as_str()));
            Some((object, name, timestamp, sequence, meta_name))
        })
        .collect();
    // Every archive (to count its messages) and its metadata, read concurrently.
    let mut keys = Vec::new();
    for (object, _, _, _, meta_name) in &archives {
        keys.push(object.key.clone());
        if let Some(meta_name) = meta_name {
            keys.push(store.key(&[session_id, meta_name]));
        }
    }
    let mut contents = store.get_many(keys).into_iter();
    let mut found = Vec::new();
    for (object, name, timestamp, sequence, meta_name) in archives {
        let archive_bytes = contents.next().unwrap_or(Ok(None)).map_err(history_error)?;
        let meta = match meta_name {
            Some(meta_name) => contents
                .next()
                .and_then(|read| read.ok().flatten())
                .and_then(|bytes| parse_json_object(&bytes))
                // A metadata object describing another archive is not this one's.
                .filter(|value| value.get("archive").and_then(Value::as_str) == Some(name))
                .map(|value| (meta_name, value)),
            None => None,
        };
        let message_count = archive_bytes.and_then(|bytes| archive::count_archived(&bytes[..]));
        let created_at = meta
            .as_ref()
            .and_then(|(_, v)| v.get("createdAt")?.as_str().map(str::to_string))
            .or_else(|| timestamp_to_rfc3339(timestamp))
            .unwrap_or_else(|| timestamp.to_string());
        found.push(ArchiveInfo {
            path: store.display_path(session_id, name),
            file_name: name.to_string(),
            sequence,
            timestamp: timestamp.to_string(),
            created_at,
            message_count,
            size_bytes: object.size,
            meta_path: meta
                .as_ref()
                .map(|(m, _)| store.display_path(session_id, m)),
            summary: meta
                .as_ref()
                .and_then(|(_, v)| v.get("summary")?.as_str().map(str::to_string)),
        });
    }
    found.sort_by(|a, b| {
        (a.sequence, &a.timestamp, &a.file_name).cmp(&(b.sequence, &b.timestamp, &b.file_name))
    });
    Ok(found)
}

pub(crate) struct StoreSource<'a> {
    pub(crate) store: &'a ArchiveStore,
    pub(crate) session_id: &'a str,
}

impl ArchiveSource for StoreSource<'_> {
    fn read_archive(&self, name: &str) -> Result<ArchiveBody, HistoryError> {
        let path = self.store.display_path(self.session_id, name);
        let bytes = self
            .store
            .get(&self.store.key(&[self.session_id, name]))
            .map_err(|e| {
                HistoryError::Io(io::Error::other(format!("cannot read archive {path}: {e}")))
            })?
            .ok_or_else(|| {
                HistoryError::ArchiveNotFound(format!(
                    "archive {name} was not found in {}",
                    self.describe()
                ))
            })?;
        ArchiveBody::parse(&bytes, &path)
    }

    fn find_by_summary(&self, content: &str) -> Option<String> {
        let objects = self
            .store
            .list(&self.store.session_key(self.session_id), true)
            .ok()?;
        let mut candidates: Vec<(u64, String)> = objects
            .iter()
            .filter_map(|o| {
                let name = name_of(&o.key);
                parse_meta_name(name).map(|(_, n)| (n, o.key.clone()))
            })
            .collect();
        // Newest first: a later compaction is the likelier match.
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        candidates.into_iter().find_map(|(_, key)| {
            let meta = parse_json_object(&self.store.get(&key).ok()??)?;
            if meta.get("summary")?.as_str()? != content {
                return None;
            }
            let archive = meta.get("archive")?.as_str()?;
            parse_archive_name(archive).map(|_| archive.to_string())
        })
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.store.location(), self.session_id)
    }

    fn read_meta(&self, name: &str) -> Option<Value> {
        let meta = archive::meta_name_for(name)?;
        let bytes = self
            .store
            .get(&self.store.key(&[self.session_id, &meta]))
            .ok()??;
        if bytes.len() as u64 > archive::history::MAX_META_BYTES {
            return None;
        }
        serde_json::from_slice(&bytes).ok()
    }
}

/// Rebuilds the full conversation from a compacted one, reading the archives from the store
/// (the same rules as [`archive::restore_messages`]; archives are found by file name in the
/// session, whatever location a summary names).
pub fn restore_messages(
    store: &ArchiveStore,
    messages: &[Value],
    session_id: &str,
) -> Result<Vec<Restored>, HistoryError> {
    validate_session_id(session_id)?;
    archive::restore_from(messages, &StoreSource { store, session_id })
}

/// Removes archives older than `older_than_days` (by the timestamp in their name, else the
/// object's last modification) with their metadata. Events, summaries and memory are kept.
/// The highest sequence number is recorded first (`last-sequence`), so numbering continues
/// after every archive of a session is gone. Each session where something was removed gets a
/// `pruned` event.
pub fn prune_archives(
    store: &ArchiveStore,
    options: &PruneOptions,
) -> Result<PruneReport, HistoryError> {
    let days = options.checked_days()?;
    let sessions: Vec<String> = match options.checked_session()? {
        Some(session) => vec![session],
        None => {
            // Every `<session>/compact-…` object under the root names a session.
            let root_len = store.key(&[]).len();
            let mut sessions: Vec<String> = store
                .list(&store.key(&[]), false)
                .map_err(history_error)?
                .iter()
                .filter_map(|o| {
                    let rest = o.key.get(root_len..)?.trim_start_matches('/');
                    let (session, name) = rest.split_once('/')?;
                    (validate_session_id(session).is_ok()
                        && (parse_archive_name(name).is_some() || parse_meta_name(name).is_some()))
                    .then(|| session.to_string())
                })
                .collect();
            sessions.sort();
            sessions.dedup();
            sessions
        }
    };
    let cutoff = SystemTime::now()
        .checked_sub(Duration::from_secs_f64(days * 86_400.0))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut report = PruneReport::default();
    for session in sessions {
        let objects = store
            .list(&store.session_key(&session), true)
            .map_err(history_error)?;
        let mut old = Vec::new();
        let mut claims = Vec::new();
        let mut kept = 0;
        for object in &objects {
            let name = name_of(&object.key);
            let (timestamp, is_archive) = if let Some((ts, _)) = parse_archive_name(name) {
                (ts, true)
            } else if let Some((ts, _)) = parse_meta_name(name) {
                (ts, false)
            } else {
                continue;
            };
            let written = timestamp_to_datetime(timestamp)
                .map(SystemTime::from)
                .or(object.last_modified);
            if written.is_some_and(|t| t < cutoff) {
                old.push(object.key.clone());
                if let (true, Some((_, sequence))) = (is_archive, parse_archive_name(name)) {
                    // Its claim goes too: `last-sequence` (written first) keeps the numbering.
                    claims.push(store.key(&[&session, SEQUENCES_DIR, &sequence.to_string()]));
                }
            } else {
                kept += usize::from(is_archive);
            }
        }
        if !old.is_empty() {
            let highest = highest_sequence(store, &session).map_err(history_error)?;
            store
                .put(
                    &store.key(&[&session, LAST_SEQUENCE]),
                    format!("{highest}\n").into_bytes(),
                )
                .map_err(history_error)?;
        }
        let mut removed = Vec::new();
        for key in old {
            let name = name_of(&key).to_string();
            match store.delete(&key) {
                Ok(()) => removed.push(name),
                Err(e) => {
                    tracing::warn!(
                        "could not remove {}: {e}",
                        store.display_path(&session, &name)
                    );
                    kept += usize::from(parse_archive_name(&name).is_some());
                }
            }
        }
        if !removed.is_empty() {
            for claim in &claims {
                if let Err(e) = store.delete(claim) {
                    tracing::debug!("could not remove the sequence claim {claim}: {e}");
                }
            }
            let mut fields = Map::new();
            fields.insert("olderThanDays".into(), json!(days));
            fields.insert("removed".into(), json!(removed));
            if let Err(e) = append_event(store, &session, "pruned", fields) {
                tracing::warn!("could not record the prune of {session}: {e}");
            }
        }
        report.removed.extend(
            removed
                .iter()
                .map(|name| store.display_path(&session, name)),
        );
        report.kept += kept;
    }
    Ok(report)
}

/// [`crate::archive::persist_messages`] into `store` when there is one (an object-store `outputDir` or the
/// caller's `archiveStore`), else into `output_dir`.
pub fn persist_in(
    middle: &[Value],
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive_in(&Archive::of(middle), output_dir, store, session_id)
}

/// [`crate::archive::persist_archive`] into `store` when there is one, else into `output_dir`.
pub fn persist_archive_in(
    archive: &Archive<'_>,
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    match store {
        Some(store) => persist_archive(store, archive, session_id),
        None => crate::archive::persist_archive(archive, output_dir, session_id),
    }
}
