//! Where a session's records go ([`Records`]: its session on a store, the local disk being
//! one, through [`super::audit`]), and reading back what a session recorded, for a report of it
//! (`renderReport`): its audit events and the archives and metadata files it names. Only
//! archive and metadata names are read (`compact-…-N.json`, `compact-…-N.meta.json`), inside
//! the session only, and never through a symlink: a name taken from a file cannot make this
//! read anything else.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::audit::{append_event, append_summary, meta_text, write_meta};
use super::store::ArchiveStore;
use super::{parse_archive_name, parse_meta_name, validate_session_id, HistoryError};

pub use super::audit::read_events;

/// Where a session's records go: its session on a store (the directory under `outputDir`
/// when there is no other store).
pub(crate) struct Records<'a> {
    store: Cow<'a, ArchiveStore>,
    session_id: &'a str,
}

impl<'a> Records<'a> {
    pub(crate) fn new(
        output_dir: &Path,
        store: Option<&'a ArchiveStore>,
        session_id: &'a str,
    ) -> Records<'a> {
        Records {
            store: ArchiveStore::at(output_dir, store),
            session_id,
        }
    }

    /// Writes `compact-…-N.meta.json` beside the archive `archive_name`.
    pub(crate) fn meta(&self, archive_name: &str, meta: &impl Serialize) -> io::Result<()> {
        write_meta(&self.store, self.session_id, archive_name, meta_text(meta)?)
    }

    pub(crate) fn summary(&self, archive_name: Option<&str>, summary: &str) -> io::Result<()> {
        append_summary(&self.store, self.session_id, archive_name, summary)
    }

    pub(crate) fn event(&self, event: &str, fields: Map<String, Value>) -> io::Result<()> {
        append_event(&self.store, self.session_id, event, fields)
    }
}

/// Whether `name` is one a report may read: an archive or its metadata.
fn readable(name: &str) -> bool {
    parse_archive_name(name).is_some() || parse_meta_name(name).is_some()
}

/// The JSON content of the named files of a session, in order: `None` for a file that is
/// missing, not valid JSON or not a regular file (a report shows what it has).
pub fn read_files(
    store: &ArchiveStore,
    session_id: &str,
    names: &[String],
) -> Result<Vec<Option<Value>>, HistoryError> {
    validate_session_id(session_id)?;
    if let Some(name) = names.iter().find(|name| !readable(name)) {
        return Err(HistoryError::InvalidReference(format!(
            "{name:?} is not an archive or metadata file name"
        )));
    }
    let keys = names
        .iter()
        .map(|name| store.key(&[session_id, name]))
        .collect();
    Ok(store
        .get_many(keys)
        .into_iter()
        .map(|read| serde_json::from_slice(&read.ok()??).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::EVENTS_FILE;
    use std::fs;

    #[test]
    fn reads_events_and_named_files_and_refuses_other_names() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s");
        fs::create_dir_all(&session).unwrap();
        fs::write(
            session.join(EVENTS_FILE),
            "{\"event\":\"compacted\"}\nnot json\n{\"event\":\"failed\"}\n",
        )
        .unwrap();
        let events = read_events(&ArchiveStore::local(dir.path()), "s").unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1]["event"], "failed");
        assert!(read_events(&ArchiveStore::local(dir.path()), "missing")
            .unwrap()
            .is_empty());

        fs::write(session.join("compact-20260101T000000Z-1.json"), "[1, 2]").unwrap();
        let names = vec![
            "compact-20260101T000000Z-1.json".to_string(),
            "compact-20260101T000000Z-1.meta.json".to_string(),
        ];
        let files = read_files(&ArchiveStore::local(dir.path()), "s", &names).unwrap();
        assert_eq!(files, vec![Some(serde_json::json!([1, 2])), None]);
        for bad in [
            "../s/compact-20260101T000000Z-1.json",
            "events.jsonl",
            ".lock",
        ] {
            assert!(matches!(
                read_files(&ArchiveStore::local(dir.path()), "s", &[bad.to_string()]),
                Err(HistoryError::InvalidReference(_))
            ));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s");
        fs::create_dir_all(&session).unwrap();
        fs::write(dir.path().join("secret.json"), "[\"secret\"]").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("secret.json"),
            session.join("compact-20260101T000000Z-1.json"),
        )
        .unwrap();
        let files = read_files(
            &ArchiveStore::local(dir.path()),
            "s",
            &["compact-20260101T000000Z-1.json".to_string()],
        )
        .unwrap();
        assert_eq!(files, vec![None]);
    }
}
