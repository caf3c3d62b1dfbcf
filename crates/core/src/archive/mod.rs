//! Archives of compacted messages (PRD F-006, SPEC §6).
//!
//! `<outputDir>/<sessionId>/compact-<YYYYMMDDTHHMMSSZ>-<sequence>.json` holds what one
//! compaction archived, as indented JSON: the sequence number says which compaction of the
//! session it was (PRD F-006), so a compaction writes one archive and takes one number.
//! - When the compaction changed none of the messages it kept, the archive is the replaced
//!   (middle) messages exactly as given: a JSON array, as the PRD describes it.
//! - When it also changed kept messages — removed their thinking, or shortened an oversized tool
//!   result to fit (offload) — their originals belong to the same compaction, and the archive is
//!   an object ([`Archive`]):
//!
//!   ```text
//!   {
//!     "messages": [ …the replaced messages, exactly as given… ],
//!     "keptOriginals": {
//!       "thinkingRemoved": [ …originals of the kept messages whose thinking was removed… ],
//!       "shortened": [ …originals of the kept messages whose text was shortened… ]
//!     }
//!   }
//!   ```
//!
//!   (each list only when it has messages). The summary's thinking line names
//!   `keptOriginals.thinkingRemoved of <archive>`, and a shortened text's marker
//!   `keptOriginals.shortened[<i>] of the archive <archive>`.
//!
//! Compactions before this layout put those originals into archives of their own, with numbers
//! of their own, which the thinking line and the markers named as a whole (the fixture
//! `tests/fixtures/separate-archives` was written so); those archives are still read.
//! `offloadToolResults` on its own is an operation of its own: its archive is a plain array of
//! the originals it shortened, and its markers name a message of that array.
//!
//! Files are written to a temporary file in the
//! same directory, fsynced, and linked into place without replacing anything that exists
//! (`persist_noclobber`: a `link(2)` that fails on an existing name, symlinks included, so a
//! planted symlink is never followed); the directory is fsynced after. The sequence continues
//! from the highest archive on disk, and a collision with a concurrent writer (another thread
//! or process) simply moves on to the next number.
//!
//! Beside the archives, in the same session directory:
//! - `compact-…-N.meta.json`: the compaction's metadata (`ArchiveMeta`, written by the pipeline);
//! - `events.jsonl`: an append-only audit log, one JSON line per compaction attempt and prune;
//! - `summaries.md`: every summary of the session, in order;
//! - `.lock`: the session's lock file (it also remembers the last sequence number);
//! - `.tmp-*`: temporary files of interrupted writes, ignored by every reader.
//!
//! [`list_archives`], [`restore_messages`] (rollback: the full conversation back from a
//! compacted one, through any number of compactions) and [`prune_archives`] (retention) work
//! on that layout.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::base::error::ValidationError;

mod audit;
pub mod checkpoint;
pub(crate) mod history;
pub mod learnt;
pub mod memory;
pub mod provenance;
pub mod recall;
pub mod records;
pub mod store;

pub(crate) use audit::append;
pub use audit::{EVENTS_FILE, SUMMARIES_FILE};
pub(crate) use history::{
    count_archived, open_no_follow, restore_from, ArchiveBody, ArchiveSource, DirSource,
};
pub use history::{
    list_archives, prune_archives, restore_messages, restore_messages_with_defaults, ArchiveInfo,
    HistoryError, PruneOptions, PruneReport, Restored, DEFAULT_RETENTION_DAYS,
};
pub(crate) use records::Records;

/// The default archive directory, relative to the working directory.
pub const DEFAULT_OUTPUT_DIR: &str = "./.context-compact";
/// The default session id.
pub const DEFAULT_SESSION_ID: &str = "default";

/// Checks a session id: `[A-Za-z0-9._-]{1,128}`, not `.` or `..`, so it can never name a
/// path outside `outputDir`.
pub fn validate_session_id(session_id: &str) -> Result<(), ValidationError> {
    let valid_chars = session_id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if session_id.is_empty() || session_id.len() > 128 || !valid_chars {
        return Err(ValidationError::argument(
            "sessionId",
            format!("{session_id:?} must match [A-Za-z0-9._-]{{1,128}}"),
        ));
    }
    if session_id == "." || session_id == ".." {
        return Err(ValidationError::argument(
            "sessionId",
            format!("{session_id:?} is not allowed"),
        ));
    }
    Ok(())
}

/// The directory holding a session's archives.
pub fn session_dir(output_dir: &Path, session_id: &str) -> PathBuf {
    output_dir.join(session_id)
}

/// Parses `compact-<timestamp>-<sequence>.json` into (timestamp, sequence). Anything else
/// (metadata files, temporary files, `.lock`, the audit log) is `None`. The grammar lives with
/// the messages that name archives ([`crate::model::added::parse_archive_file_name`]).
pub fn parse_archive_name(name: &str) -> Option<(&str, u64)> {
    crate::model::added::parse_archive_file_name(name)
}

/// Parses `compact-<timestamp>-<sequence>.meta.json` (the metadata beside an archive).
pub fn parse_meta_name(name: &str) -> Option<(&str, u64)> {
    crate::model::added::parse_archive_stem(
        name.strip_prefix("compact-")?.strip_suffix(".meta.json")?,
    )
}

/// `compact-…-N.json` → `compact-…-N.meta.json`.
pub fn meta_name_for(archive_name: &str) -> Option<String> {
    parse_archive_name(archive_name)?;
    let stem = archive_name.strip_suffix(".json")?;
    Some(format!("{stem}.meta.json"))
}

/// The instant a `YYYYMMDDTHHMMSSZ` timestamp names, when it is a valid UTC date and time.
pub fn timestamp_to_datetime(timestamp: &str) -> Option<time::OffsetDateTime> {
    let ts = timestamp.as_bytes();
    if ts.len() != 16 || ts[8] != b'T' || ts[15] != b'Z' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = timestamp.get(range)?;
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let month = time::Month::try_from(number(4..6)? as u8).ok()?;
    let date =
        time::Date::from_calendar_date(number(0..4)? as i32, month, number(6..8)? as u8).ok()?;
    let clock = time::Time::from_hms(
        number(9..11)? as u8,
        number(11..13)? as u8,
        number(13..15)? as u8,
    )
    .ok()?;
    Some(time::PrimitiveDateTime::new(date, clock).assume_utc())
}

/// `20260217T093000Z` → `2026-02-17T09:30:00Z` (RFC 3339), when the timestamp is valid.
pub fn timestamp_to_rfc3339(timestamp: &str) -> Option<String> {
    timestamp_to_datetime(timestamp).map(|t| rfc3339(t, false))
}

/// RFC 3339 in UTC, with milliseconds when asked (`2026-02-17T09:30:00.123Z`).
pub fn rfc3339(t: time::OffsetDateTime, millis: bool) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let seconds = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    if millis {
        format!("{seconds}.{:03}Z", t.millisecond())
    } else {
        format!("{seconds}Z")
    }
}

/// The highest sequence number among the archives in `dir` (0 when there are none).
/// Temporary files (`.tmp…`) and metadata files are ignored.
pub fn highest_sequence(dir: &Path) -> io::Result<u64> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut highest = 0;
    for entry in entries {
        let entry = entry?;
        if let Some((_, sequence)) = entry.file_name().to_str().and_then(parse_archive_name) {
            highest = highest.max(sequence);
        }
    }
    Ok(highest)
}

/// `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format, UTC: sortable, no colons for Windows).
pub fn timestamp_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    now.format(&format)
        .unwrap_or_else(|_| "19700101T000000Z".into())
}

/// Creates `dir` and its parents; the directories this creates are private (0700).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    if fs::symlink_metadata(dir)?.file_type().is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symlink; refusing to write archives through it",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Writes `bytes` to `dir/<name>` atomically and privately (0600), never replacing an existing
/// entry. Returns `AlreadyExists` when the name is taken.
pub fn write_new_file(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let temp = write_temp_file(dir, |file| file.write_all(bytes))?;
    link_new_file(temp, dir, name).map_err(|(_, e)| e)
}

/// Writes `bytes` to `dir/<name>` atomically and privately (0600), replacing what is there: a
/// reader sees the old file or the new one, never a part (a temporary file renamed over it).
pub fn replace_file(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let temp = write_temp_file(dir, |file| file.write_all(bytes))?;
    let target = dir.join(name);
    temp.persist(&target).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(target)
}

/// Writes a private (0600) temporary file in `dir` through `write` and makes it durable.
fn write_temp_file(
    dir: &Path,
    write: impl FnOnce(&mut io::BufWriter<&mut fs::File>) -> io::Result<()>,
) -> io::Result<tempfile::NamedTempFile> {
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    let mut writer = io::BufWriter::new(temp.as_file_mut());
    write(&mut writer)?;
    writer.flush()?;
    drop(writer);
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Gives a written temporary file its name, never replacing anything already there; on
/// failure the temporary file comes back with the error, to try another name.
fn link_new_file(
    temp: tempfile::NamedTempFile,
    dir: &Path,
    name: &str,
) -> Result<PathBuf, (tempfile::NamedTempFile, io::Error)> {
    let target = dir.join(name);
    temp.persist_noclobber(&target)
        .map_err(|e| (e.file, e.error))?;
    sync_dir(dir);
    Ok(target)
}

fn sync_dir(dir: &Path) {
    // Makes the new directory entry durable; not possible (nor needed) on every platform.
    #[cfg(unix)]
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// The indented JSON of messages, as they were given (key order, numbers, unknown fields).
pub fn archive_json(messages: &[Value]) -> String {
    serde_json::to_string_pretty(messages).unwrap_or_else(|_| "[]".into())
}

/// The key of an archive object's replaced messages.
pub const MESSAGES_KEY: &str = "messages";
/// The key of an archive object's originals of changed kept messages.
pub const KEPT_ORIGINALS_KEY: &str = "keptOriginals";
/// Under [`KEPT_ORIGINALS_KEY`]: the kept messages whose thinking was removed.
pub const THINKING_REMOVED_KEY: &str = "thinkingRemoved";
/// Under [`KEPT_ORIGINALS_KEY`]: the kept messages whose text was shortened to fit.
pub const SHORTENED_KEY: &str = "shortened";

/// What one compaction archives, under one sequence number: the messages it replaced and the
/// originals of the kept messages it changed (see the module docs for the file's layout).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Archive<'a> {
    pub messages: &'a [Value],
    #[serde(rename = "keptOriginals")]
    pub kept: KeptOriginals<'a>,
}

/// The originals of the kept messages a compaction changed, in the order of the input.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct KeptOriginals<'a> {
    #[serde(
        rename = "thinkingRemoved",
        skip_serializing_if = "<[Value]>::is_empty"
    )]
    pub thinking_removed: &'a [Value],
    #[serde(rename = "shortened", skip_serializing_if = "<[Value]>::is_empty")]
    pub shortened: &'a [Value],
}

impl<'a> Archive<'a> {
    /// An archive of `messages` alone.
    pub fn of(messages: &'a [Value]) -> Self {
        Archive {
            messages,
            kept: KeptOriginals::default(),
        }
    }

    fn has_kept(&self) -> bool {
        !self.kept.thinking_removed.is_empty() || !self.kept.shortened.is_empty()
    }

    /// Writes the archive's indented JSON: the array of its messages, or the object with its
    /// kept originals when there are any.
    fn write_json(&self, writer: &mut impl Write) -> io::Result<()> {
        if self.has_kept() {
            serde_json::to_writer_pretty(writer, self).map_err(io::Error::from)
        } else {
            serde_json::to_writer_pretty(writer, self.messages).map_err(io::Error::from)
        }
    }

    /// The archive's indented JSON, as written to disk.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        // Writing a `Value` into memory cannot fail.
        let _ = self.write_json(&mut bytes);
        bytes
    }
}

/// A written archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    pub path: PathBuf,
    pub sequence: u64,
    pub timestamp: String,
}

/// Persists `middle` as the session's next archive (PRD F-006) and returns where it went.
pub fn persist_messages(
    middle: &[Value],
    output_dir: &Path,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    persist_archive(&Archive::of(middle), output_dir, session_id)
}

/// Persists what one compaction archives as the session's next archive, under one sequence
/// number, and returns where it went.
pub fn persist_archive(
    archive: &Archive<'_>,
    output_dir: &Path,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    validate_session_id(session_id)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let dir = session_dir(output_dir, session_id);
    create_private_dir(&dir)?;
    // The archive is written (streamed, a compacted middle can be large) before the lock is
    // taken. Sequence numbers must be unique whatever the timestamp, so choosing one and
    // naming the file happen under an exclusive lock on the session directory's lock file (an
    // advisory `flock`: it serializes threads and processes alike).
    let mut temp = Some(write_temp_file(&dir, |w| archive.write_json(w))?);
    let mut lock = open_lock_file(&dir)?;
    lock.lock()?;
    let result = (|| {
        // The lock file also remembers the last sequence handed out, so numbering continues
        // even after `prune_archives` removed every archive of the session.
        let mut sequence = highest_sequence(&dir)?.max(read_counter(&mut lock)) + 1;
        // A name can still be taken by something that is not ours (a planted symlink, a
        // writer ignoring the lock); move on to the next number then.
        for _ in 0..1_000 {
            let timestamp = timestamp_now();
            let name = format!("compact-{timestamp}-{sequence}.json");
            let file = temp
                .take()
                .expect("the temporary file is returned on every failure");
            match link_new_file(file, &dir, &name) {
                Ok(path) => {
                    write_counter(&mut lock, sequence);
                    return Ok(ArchiveFile {
                        path,
                        sequence,
                        timestamp,
                    });
                }
                Err((file, e)) if e.kind() == io::ErrorKind::AlreadyExists => {
                    temp = Some(file);
                    sequence += 1;
                }
                Err((_, e)) => return Err(e),
            }
        }
        Err(io::Error::other(
            "could not find a free archive sequence number",
        ))
    })();
    let _ = lock.unlock();
    result
}

/// The name of the per-session lock file.
pub const LOCK_FILE: &str = ".lock";

/// The last sequence number recorded in the lock file (0 when none).
pub(crate) fn read_counter(lock: &mut fs::File) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let mut text = String::new();
    if lock.seek(SeekFrom::Start(0)).is_err() || lock.take(32).read_to_string(&mut text).is_err() {
        return 0;
    }
    text.trim().parse().unwrap_or(0)
}

/// Records the last sequence number handed out (best effort: the archives on disk remain the
/// primary source).
pub(crate) fn write_counter(lock: &mut fs::File, sequence: u64) {
    use std::io::{Seek, SeekFrom};
    let _ = lock
        .set_len(0)
        .and_then(|_| lock.seek(SeekFrom::Start(0)))
        .and_then(|_| lock.write_all(format!("{sequence}\n").as_bytes()));
}

/// Runs `f` holding the session's exclusive lock (threads and processes alike).
pub(crate) fn with_session_lock<T>(
    dir: &Path,
    f: impl FnOnce(&mut fs::File) -> io::Result<T>,
) -> io::Result<T> {
    let mut lock = open_lock_file(dir)?;
    lock.lock()?;
    let result = f(&mut lock);
    let _ = lock.unlock();
    result
}

pub(crate) fn open_lock_file(dir: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
        // Never open a planted symlink in place of the lock file.
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(dir.join(LOCK_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_ids_cannot_traverse() {
        for bad in [
            "",
            ".",
            "..",
            "../etc",
            "a/b",
            "a\\b",
            "x y",
            &"a".repeat(129),
        ] {
            assert!(validate_session_id(bad).is_err(), "{bad:?}");
        }
        for good in ["default", "a.b-c_D9", "..x", &"a".repeat(128)] {
            assert!(validate_session_id(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn names_parse_and_ignore_meta_and_temp_files() {
        assert_eq!(
            parse_archive_name("compact-20260217T093000Z-12.json"),
            Some(("20260217T093000Z", 12))
        );
        assert_eq!(
            parse_archive_name("compact-20260217T093000Z-12.meta.json"),
            None
        );
        assert_eq!(parse_archive_name(".tmp-abc"), None);
        assert_eq!(parse_archive_name("compact-2026-1.json"), None);
    }

    #[test]
    fn sequence_starts_at_one_and_continues_after_restart() {
        let dir = tempfile::tempdir().unwrap();
        let middle = vec![json!({"role": "user", "content": "hi", "z": 1, "a": 2})];
        let first = persist_messages(&middle, dir.path(), "s").unwrap();
        assert_eq!(first.sequence, 1);
        fs::write(dir.path().join("s/.tmp-leftover"), "garbage").unwrap();
        let second = persist_messages(&middle, dir.path(), "s").unwrap();
        assert_eq!(second.sequence, 2);
        let name = second
            .path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(parse_archive_name(&name).is_some(), "{name}");
        let text = fs::read_to_string(&second.path).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&middle).unwrap());
        assert!(
            text.find("\"z\"").unwrap() < text.find("\"a\"").unwrap(),
            "key order kept"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&second.path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                fs::metadata(dir.path().join("s"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777,
                0o700
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s");
        create_private_dir(&session).unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        // Plant symlinks at the next names, whatever the second.
        let ts = timestamp_now();
        std::os::unix::fs::symlink(&victim, session.join(format!("compact-{ts}-1.json"))).unwrap();
        let written =
            persist_messages(&[json!({"role": "user", "content": "x"})], dir.path(), "s").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(written.sequence >= 2);
        assert!(!fs::symlink_metadata(&written.path)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn concurrent_writers_get_distinct_sequences() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let handles: Vec<_> = (0..64)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    persist_messages(
                        &[json!({"role": "user", "content": i.to_string()})],
                        &path,
                        "c",
                    )
                    .unwrap()
                    .sequence
                })
            })
            .collect();
        let mut sequences: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        sequences.sort();
        assert_eq!(sequences, (1..=64).collect::<Vec<_>>());
    }

    #[test]
    fn unwritable_output_dir_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(persist_messages(
            &[json!({"role": "user", "content": "x"})],
            &file.join("sub"),
            "s"
        )
        .is_err());
    }
}
