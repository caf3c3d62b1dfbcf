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
//! Where the files go is an [`store::ArchiveStore`]: the directory `outputDir` (the local disk,
//! [`store::fs::FsBackend`]: private modes, no symlink followed, atomic writes) or an object
//! store. Every operation on a session is written once over it ([`session`]); the rules the two
//! keep apart (the session's lock and appendable files on disk, conditional creates on a store)
//! are said there. The sequence continues from the highest archive, and a collision with a
//! concurrent writer (another thread, process or machine) simply moves on to the next number.
//!
//! Beside the archives, in the same session directory:
//! - `compact-…-N.meta.json`: the compaction's metadata (`ArchiveMeta`, written by the pipeline);
//! - `events.jsonl`: an append-only audit log, one JSON line per compaction attempt and prune
//!   ([`audit`]; one object per event under `events/` on a store);
//! - `summaries.md`: every summary of the session, in order (`summaries/` on a store);
//! - `checkpoint-<prefix>.json`: what a compaction did, for a later call to reuse
//!   ([`checkpoint`]);
//! - `.lock`: the session's lock file (it also remembers the last sequence number);
//! - `.tmp-*`: temporary files of interrupted writes, ignored by every reader.
//!
//! [`session::list_archives`], [`session::restore_messages`] (rollback: the full conversation
//! back from a compacted one, through any number of compactions, by the rules in `restore.rs`) and
//! [`session::prune_archives`] (retention) work on that layout; the functions of the same names
//! here take the directory.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::base::error::ValidationError;

mod audit;
pub mod checkpoint;
mod dir;
pub mod learnt;
pub mod memory;
pub mod provenance;
pub mod recall;
pub mod records;
mod restore;
pub mod session;
pub mod store;

pub use audit::{EVENTS_DIR, EVENTS_FILE, SUMMARIES_DIR, SUMMARIES_FILE};
pub use dir::{list_archives, persist_archive, persist_messages, prune_archives, restore_messages};
pub(crate) use records::Records;
pub use restore::HistoryError;
pub use session::{ArchiveInfo, PruneOptions, PruneReport, Restored, DEFAULT_RETENTION_DAYS};
pub use store::fs::{create_private_dir, write_new_file, LOCK_FILE};

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

/// `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format, UTC: sortable, no colons for Windows).
pub fn timestamp_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    now.format(&format)
        .unwrap_or_else(|_| "19700101T000000Z".into())
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

/// `YYYYMMDDTHHMMSS.mmmZ` now: fixed width, so names starting with it list in time order.
pub(crate) fn instant_name() -> String {
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

/// A random tag that makes an object's name its own (records on a store, claims).
pub(crate) fn random_suffix() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// The last segment of a key (a file or object name).
pub(crate) fn name_of(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// An invalid session id as the error of a write.
pub(crate) fn invalid_session(e: ValidationError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

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
