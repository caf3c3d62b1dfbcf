//! A session's archives on any storage, written once over an [`ArchiveStore`] (the local disk
//! or an object store, see [`super::store`]): the next archive under a number of its own, the
//! listing, the source restore and recall read, and pruning (retention). The SanBot seed,
//! sections 5.1–5.3.
//!
//! Where a disk and an object store differ, the store says which it is and the rule of each is
//! kept:
//! - sequence numbers: on disk under the session's lock (`.lock`, which also remembers the last
//!   number handed out); on a store, where nothing can be locked, by a conditional create of
//!   `sequences/<n>` before the archive is written (two writers on different machines that pick
//!   the same number cannot both succeed, whatever second their archive names carry);
//! - what is appended (audit events, summaries, memory): a file on disk, one object per record
//!   on a store ([`super::audit`]).
//!
//! What is guaranteed when many agents write one session at once:
//! - an archive's sequence number is unique, and nothing is ever overwritten (a name taken by
//!   something else moves the writer on to the next number);
//! - an archive is listed only once it is complete (a temporary file linked into place on disk,
//!   a single PUT on a store); its metadata is written after it, and an archive without
//!   metadata is still listed (with `metaPath: null`);
//! - no audit event, summary or memory fragment is lost to a concurrent writer.
//!
//! Not guaranteed on a store: the order of sequence numbers between machines follows who won
//! each conditional create, not the clocks; the timestamps in names come from each writer's
//! clock; and two compactions extracting the same memory line at the same moment may both
//! record it.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::{json, Map, Value};

pub use super::restore::HistoryError;
use super::restore::{restore_from, ArchiveBody, ArchiveSource};
use super::store::fs::{read_counter, write_counter, LOCK_FILE};
use super::store::{ArchiveStore, StoreError};
use super::{
    audit, invalid_session, meta_name_for, name_of, parse_archive_name, parse_meta_name,
    random_suffix, rfc3339, timestamp_now, timestamp_to_datetime, timestamp_to_rfc3339,
    validate_session_id, Archive, ArchiveFile, MESSAGES_KEY,
};
use crate::base::error::ValidationError;

pub use super::audit::{read_events, EVENTS_DIR, SUMMARIES_DIR};
pub use crate::model::piece::Restored;

/// SanBot's retention: archives older than this many days are pruned by default.
pub const DEFAULT_RETENTION_DAYS: f64 = 7.0;
/// The directory of sequence-number claims on a store: `sequences/<n>` is created
/// (create-only) before archive `n` is written, so two writers can never both take `n` — even
/// in different seconds, when their archive names (which hold the timestamp) differ.
pub const SEQUENCES_DIR: &str = "sequences";
/// The object remembering the highest sequence number a prune removed on a store, so
/// numbering continues (on disk the lock file remembers it).
pub const LAST_SEQUENCE: &str = "last-sequence";
/// Metadata files larger than this are not read (one holds a summary: a few KB, rarely more
/// than a few hundred).
pub(crate) const MAX_META_BYTES: u64 = 16 * 1024 * 1024;

fn history_error(e: StoreError) -> HistoryError {
    HistoryError::Io(e.into())
}

// ---------------------------------------------------------------------------------------------
// Writing: the next archive

/// The highest sequence number of the session: its archives' and claims' (a claim whose archive
/// failed is a gap not to reuse), or the one a prune recorded (`last-sequence` on a store).
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

/// Persists `middle` as the session's next archive (PRD F-006) and returns where it went.
pub fn persist_messages(
    store: &ArchiveStore,
    middle: &[Value],
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive(store, &Archive::of(middle), session_id)
}

/// Persists what one compaction archives (its replaced messages and the originals of the kept
/// messages it changed) as the session's next archive, under one number: the highest found
/// plus one, moving on to the next when the name is taken. On disk the number is chosen and the
/// archive linked into place under the session's lock, which then remembers the number; on a
/// store the number is first claimed (`sequences/<n>`, create-only), and a claim whose archive
/// could not be written stays: the number is skipped (a gap), never handed out twice.
pub fn persist_archive(
    store: &ArchiveStore,
    archive: &Archive<'_>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    validate_session_id(session_id).map_err(invalid_session)?;
    let bytes = archive.to_json_bytes();
    match store.disk() {
        Some(disk) => disk.with_lock(&store.session_key(session_id), LOCK_FILE, |lock| {
            let highest = highest_sequence(store, session_id)?.max(read_counter(lock));
            let written = persist_from(store, session_id, &bytes, highest + 1, false)?;
            write_counter(lock, written.sequence);
            Ok(written)
        }),
        None => {
            let highest = highest_sequence(store, session_id).map_err(io::Error::from)?;
            persist_from(store, session_id, &bytes, highest + 1, true)
        }
    }
}

/// Writes `bytes` as archive `sequence`, or the first free number after it; `claim`: take each
/// number with a conditional create first (where no lock serializes the writers).
fn persist_from(
    store: &ArchiveStore,
    session_id: &str,
    bytes: &[u8],
    mut sequence: u64,
    claim: bool,
) -> io::Result<ArchiveFile> {
    for _ in 0..1_000 {
        let timestamp = timestamp_now();
        let name = format!("compact-{timestamp}-{sequence}.json");
        if claim {
            // The claim names its archive and this writer (a random tag), so that a writer
            // whose retried claim finds the key taken recognises only its own claim (`put_new`).
            let claim = format!("{name} {}\n", random_suffix()).into_bytes();
            let claim_key = store.key(&[session_id, SEQUENCES_DIR, &sequence.to_string()]);
            match store.put_new(&claim_key, claim) {
                Ok(()) => {}
                Err(StoreError::AlreadyExists) => {
                    sequence += 1;
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        }
        match store.put_new(&store.key(&[session_id, &name]), bytes.to_vec()) {
            Ok(()) => {
                return Ok(ArchiveFile {
                    path: PathBuf::from(store.display_path(session_id, &name)),
                    sequence,
                    timestamp,
                })
            }
            // Something that is not ours has the name (a planted symlink, a writer ignoring the
            // lock, an object written outside this library): take the next number.
            Err(StoreError::AlreadyExists) => sequence += 1,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other(
        "could not find a free archive sequence number",
    ))
}

/// [`persist_messages`] into `store` when there is one (an object-store `outputDir` or the
/// caller's `archiveStore`), else into the directory `output_dir`.
pub fn persist_in(
    middle: &[Value],
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive_in(&Archive::of(middle), output_dir, store, session_id)
}

/// [`persist_archive`] into `store` when there is one, else into the directory `output_dir`.
pub fn persist_archive_in(
    archive: &Archive<'_>,
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive(&ArchiveStore::at(output_dir, store), archive, session_id)
}

// ---------------------------------------------------------------------------------------------
// Listing

/// One archive of a session, as `listArchives` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveInfo {
    /// `<outputDir>/<sessionId>/<fileName>`, as the output directory was given.
    pub path: String,
    pub file_name: String,
    pub sequence: u64,
    /// The file name's timestamp, `YYYYMMDDTHHMMSSZ`.
    pub timestamp: String,
    /// When it was written (RFC 3339): from the metadata, else from the timestamp.
    pub created_at: String,
    /// Messages the compaction replaced (an archive's `messages`; the kept originals beside
    /// them are not counted); `None` when the file is not a readable archive.
    pub message_count: Option<usize>,
    pub size_bytes: u64,
    /// The metadata file beside it, when there is a readable one.
    pub meta_path: Option<String>,
    /// The summary that replaced these messages, from the metadata.
    pub summary: Option<String>,
}

/// The archives of a session, by sequence (then timestamp). A missing session is an empty
/// history. Only archives count: temporary files, the lock, metadata, audit files, a symlink or
/// anything else at an archive's name are not listed. Each archive is read to count its
/// messages; a missing or corrupt metadata file only leaves `meta_path` and `summary` empty.
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
    // Every archive (to count its messages) and its metadata, read concurrently on a store.
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
        let archive_bytes = match contents.next().unwrap_or(Ok(None)) {
            // A symlink or a directory at the name is not an archive.
            Err(StoreError::Refused(_)) => None,
            read => Some(read.map_err(history_error)?),
        };
        let meta = match meta_name {
            Some(meta_name) => contents
                .next()
                .and_then(|read| read.ok().flatten())
                .filter(|bytes| bytes.len() as u64 <= MAX_META_BYTES)
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                // A metadata file describing another archive is not this one's.
                .filter(|value| value.get("archive").and_then(Value::as_str) == Some(name))
                .map(|value| (meta_name, value)),
            None => None,
        };
        let Some(archive_bytes) = archive_bytes else {
            continue;
        };
        let message_count = archive_bytes.and_then(|bytes| count_archived(&bytes[..]));
        let created_at = meta
            .as_ref()
            .and_then(|(_, v)| v.get("createdAt")?.as_str().map(str::to_string))
            .or_else(|| timestamp_to_rfc3339(timestamp))
            .or_else(|| Some(rfc3339(object.last_modified?.into(), false)))
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

/// The number of messages an archive holds — the elements of an array, or of an archive
/// object's `messages` — without building them; `None` when it is not an archive.
fn count_archived(reader: impl Read) -> Option<usize> {
    serde_json::from_reader::<_, MessageCount>(reader)
        .ok()
        .map(|count| count.0)
}

/// Deserializes an archive into the number of its messages only.
struct MessageCount(usize);

impl<'de> serde::Deserialize<'de> for MessageCount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct Counter;
        impl<'de> Visitor<'de> for Counter {
            type Value = MessageCount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an archive: an array of messages, or an object with a \"messages\" array",
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessageCount, A::Error> {
                let mut count = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    count += 1;
                }
                Ok(MessageCount(count))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageCount, A::Error> {
                let mut count = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == MESSAGES_KEY {
                        count = Some(map.next_value::<Vec<IgnoredAny>>()?.len());
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                count
                    .map(MessageCount)
                    .ok_or_else(|| A::Error::missing_field(MESSAGES_KEY))
            }
        }
        deserializer.deserialize_any(Counter)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading back: what restore and recall read

/// A session on a store, as restore and recall read it. Archives are looked up by file name in
/// the session only, and never through a symlink.
pub(crate) struct SessionSource<'a> {
    pub(crate) store: &'a ArchiveStore,
    pub(crate) session_id: &'a str,
}

impl ArchiveSource for SessionSource<'_> {
    fn read_archive(&self, name: &str) -> Result<ArchiveBody, HistoryError> {
        let path = self.store.display_path(self.session_id, name);
        let bytes = match self.store.get(&self.store.key(&[self.session_id, name])) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return Err(HistoryError::ArchiveNotFound(format!(
                    "archive {name} was not found in {}",
                    self.describe()
                )))
            }
            Err(StoreError::Refused(why)) => {
                return Err(HistoryError::InvalidArchive(format!(
                    "refusing to read archive {path}: {why}"
                )))
            }
            Err(e) => {
                return Err(HistoryError::Io(io::Error::other(format!(
                    "cannot read archive {path}: {e}"
                ))))
            }
        };
        ArchiveBody::parse(&bytes, &path)
    }

    fn find_by_summary(&self, content: &str) -> Option<String> {
        let objects = self
            .store
            .list(&self.store.session_key(self.session_id), true)
            .ok()?;
        let mut candidates: Vec<(u64, String)> = objects
            .iter()
            .filter_map(|o| parse_meta_name(name_of(&o.key)).map(|(_, n)| (n, o.key.clone())))
            .collect();
        // Newest first: a later compaction is the likelier match.
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        candidates.into_iter().find_map(|(_, key)| {
            let meta = read_json(self.store, &key)?;
            if meta.get("summary")?.as_str()? != content {
                return None;
            }
            let archive = meta.get("archive")?.as_str()?;
            parse_archive_name(archive).map(|_| archive.to_string())
        })
    }

    fn describe(&self) -> String {
        let path = self.store.display_path(self.session_id, "");
        path.strip_suffix('/').unwrap_or(&path).to_string()
    }

    fn read_meta(&self, name: &str) -> Option<Value> {
        let meta = meta_name_for(name)?;
        read_json(self.store, &self.store.key(&[self.session_id, &meta]))
    }
}

/// The JSON of a metadata file, when it is there, readable and not too large.
fn read_json(store: &ArchiveStore, key: &str) -> Option<Value> {
    let bytes = store.get_at_most(key, MAX_META_BYTES).ok()??;
    if bytes.len() as u64 > MAX_META_BYTES {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Rebuilds the full conversation from a compacted list, reading the session's archives: every
/// summary of the library is replaced by the messages of the archive it names, through any
/// number of compactions (the rules are those of `restore_from`). Archives are looked up by file name
/// in the session only (`<outputDir>/<sessionId>/` on disk), whatever location a summary names,
/// and never through a symlink.
pub fn restore_messages(
    store: &ArchiveStore,
    messages: &[Value],
    session_id: &str,
) -> Result<Vec<Restored>, HistoryError> {
    validate_session_id(session_id)?;
    restore_from(messages, &SessionSource { store, session_id })
}

// ---------------------------------------------------------------------------------------------
// Pruning

/// What to prune.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneOptions {
    /// Remove archives written more than this many days ago. Default 7 (SanBot's retention).
    pub older_than_days: f64,
    /// Only this session; by default every session under the output directory.
    pub session_id: Option<String>,
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions {
            older_than_days: DEFAULT_RETENTION_DAYS,
            session_id: None,
        }
    }
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// The files removed (archives, their metadata, abandoned temporary files).
    pub removed: Vec<String>,
    /// Archives kept.
    pub kept: usize,
}

impl PruneOptions {
    /// `older_than_days`, refused unless it is a non-negative number.
    pub(crate) fn checked_days(&self) -> Result<f64, HistoryError> {
        let days = self.older_than_days;
        if !days.is_finite() || days < 0.0 {
            return Err(ValidationError::argument(
                "olderThanDays",
                format!("must be a non-negative number of days, got {days}"),
            )
            .into());
        }
        Ok(days)
    }

    /// The one session to prune (validated), or `None` for every session.
    pub(crate) fn checked_session(&self) -> Result<Option<String>, HistoryError> {
        match &self.session_id {
            Some(session) => {
                validate_session_id(session)?;
                Ok(Some(session.clone()))
            }
            None => Ok(None),
        }
    }
}

/// Removes archives older than `older_than_days` (by the timestamp in their name, or their
/// last modification when that is not a valid date) together with their metadata, and
/// temporary files abandoned as long ago. Never touches the audit events, the summaries, the
/// extracted memory or any other file. The highest sequence number is remembered first (the
/// lock file on disk, `last-sequence` on a store), so numbering continues after every archive
/// of a session is gone. Each session where something was removed gets a `pruned` event.
pub fn prune_archives(
    store: &ArchiveStore,
    options: &PruneOptions,
) -> Result<PruneReport, HistoryError> {
    let days = options.checked_days()?;
    let sessions: Vec<String> = match options.checked_session()? {
        Some(session) => vec![session],
        None => {
            // Every `<session>/compact-…` (or abandoned `.tmp-…`) under the root names a
            // session; the listing never walks through a symlink.
            let root_len = store.key(&[]).len();
            let mut sessions: Vec<String> = store
                .list(&store.key(&[]), false)
                .map_err(history_error)?
                .iter()
                .filter_map(|o| {
                    let rest = o.key.get(root_len..)?.trim_start_matches('/');
                    let (session, name) = rest.split_once('/')?;
                    (validate_session_id(session).is_ok() && prunable(name).is_some())
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
            let Some((timestamp, is_archive)) = prunable(name) else {
                continue;
            };
            let written = timestamp
                .and_then(timestamp_to_datetime)
                .map(SystemTime::from)
                .or(object.last_modified);
            if written.is_some_and(|t| t < cutoff) {
                old.push(object.key.clone());
                if let (true, Some((_, sequence))) = (is_archive, parse_archive_name(name)) {
                    // Its claim goes too (none on disk): the number remembered keeps the count.
                    claims.push(store.key(&[&session, SEQUENCES_DIR, &sequence.to_string()]));
                }
            } else {
                kept += usize::from(is_archive);
            }
        }
        if !old.is_empty() {
            remember_highest(store, &session).map_err(HistoryError::Io)?;
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
            if let Err(e) = audit::append_event(store, &session, "pruned", fields) {
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

/// What a prune may remove: an archive or its metadata (with the timestamp of its name, and
/// whether it is the archive), or an abandoned temporary file. `None`: never removed (the audit
/// events, the summaries, the lock, memory, anything else).
fn prunable(name: &str) -> Option<(Option<&str>, bool)> {
    if let Some((timestamp, _)) = parse_archive_name(name) {
        Some((Some(timestamp), true))
    } else if let Some((timestamp, _)) = parse_meta_name(name) {
        Some((Some(timestamp), false))
    } else {
        name.starts_with(".tmp-").then_some((None, false))
    }
}

/// Remembers the session's highest sequence number before archives are removed.
fn remember_highest(store: &ArchiveStore, session_id: &str) -> io::Result<()> {
    match store.disk() {
        Some(disk) => disk.with_lock(&store.session_key(session_id), LOCK_FILE, |lock| {
            let highest = highest_sequence(store, session_id)?.max(read_counter(lock));
            write_counter(lock, highest);
            Ok(())
        }),
        None => {
            let highest = highest_sequence(store, session_id)?;
            store.put(
                &store.key(&[session_id, LAST_SEQUENCE]),
                format!("{highest}\n").into_bytes(),
            )?;
            Ok(())
        }
    }
}
