//! Where a session's records go ([`Records`]: its directory, through [`super::audit`], or its
//! session on a store), and reading back what a session recorded, for a report of it
//! (`renderReport`): its audit events (`events.jsonl` on disk, one object per event on a store)
//! and the archives and metadata files it names. Only archive and metadata names are read (`compact-…-N.json`,
//! `compact-…-N.meta.json`), inside the session only, and never through a symlink: a name
//! taken from a file cannot make this read anything else.

use std::io::{self, BufRead, Read};
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::audit::{append_event, append_summary, meta_text, summary_text, write_meta};
use super::store::ArchiveStore;
use super::{
    open_no_follow, parse_archive_name, parse_meta_name, session_dir, validate_session_id,
    HistoryError, EVENTS_FILE,
};

/// Where a session's records go: its directory, or its session on a store
/// ([`crate::archive::store::session`]: one object per event and per summary).
pub(crate) enum Records<'a> {
    Dir(std::path::PathBuf),
    Store(&'a ArchiveStore, &'a str),
}

impl<'a> Records<'a> {
    pub(crate) fn new(
        output_dir: &Path,
        store: Option<&'a ArchiveStore>,
        session_id: &'a str,
    ) -> Records<'a> {
        match store {
            Some(store) => Records::Store(store, session_id),
            None => Records::Dir(session_dir(output_dir, session_id)),
        }
    }

    /// Writes `compact-…-N.meta.json` beside the archive `archive_name`.
    pub(crate) fn meta(&self, archive_name: &str, meta: &impl Serialize) -> io::Result<()> {
        let text = meta_text(meta)?;
        match self {
            Records::Dir(dir) => write_meta(dir, archive_name, &text),
            Records::Store(store, session) => {
                super::store::session::write_meta(store, session, archive_name, text)
            }
        }
    }

    pub(crate) fn summary(&self, archive_name: Option<&str>, summary: &str) -> io::Result<()> {
        match self {
            Records::Dir(dir) => append_summary(dir, archive_name, summary),
            Records::Store(store, session) => super::store::session::append_summary(
                store,
                session,
                archive_name,
                summary_text(archive_name, summary),
            ),
        }
    }

    pub(crate) fn event(&self, event: &str, fields: Map<String, Value>) -> io::Result<()> {
        match self {
            Records::Dir(dir) => append_event(dir, event, fields),
            Records::Store(store, session) => {
                super::store::session::append_event(store, session, event, fields)
            }
        }
    }
}

/// A session's audit events, oldest first. Lines that are not JSON objects (a torn write) are
/// skipped; a session without a log has no events.
pub fn read_events(output_dir: &Path, session_id: &str) -> Result<Vec<Value>, HistoryError> {
    validate_session_id(session_id)?;
    let path = session_dir(output_dir, session_id).join(EVENTS_FILE);
    let file = match open_no_follow(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut events = Vec::new();
    for line in io::BufReader::new(file).lines() {
        if let Ok(event @ Value::Object(_)) = serde_json::from_str::<Value>(&line?) {
            events.push(event);
        }
    }
    Ok(events)
}

/// The session's audit events on a store, oldest first.
pub fn read_store_events(
    store: &ArchiveStore,
    session_id: &str,
) -> Result<Vec<Value>, HistoryError> {
    super::store::session::read_events(store, session_id)
}

/// Whether `name` is one a report may read: an archive or its metadata.
fn readable(name: &str) -> bool {
    parse_archive_name(name).is_some() || parse_meta_name(name).is_some()
}

fn check_names(names: &[String]) -> Result<(), HistoryError> {
    match names.iter().find(|name| !readable(name)) {
        Some(name) => Err(HistoryError::InvalidReference(format!(
            "{name:?} is not an archive or metadata file name"
        ))),
        None => Ok(()),
    }
}

/// The JSON content of the named files of a session, in order: `None` for a file that is
/// missing or not valid JSON (a report shows what it has).
pub fn read_files(
    output_dir: &Path,
    session_id: &str,
    names: &[String],
) -> Result<Vec<Option<Value>>, HistoryError> {
    validate_session_id(session_id)?;
    check_names(names)?;
    let dir = session_dir(output_dir, session_id);
    Ok(names
        .iter()
        .map(|name| {
            let mut text = String::new();
            open_no_follow(&dir.join(name))
                .and_then(|file| io::BufReader::new(file).read_to_string(&mut text))
                .ok()?;
            serde_json::from_str(&text).ok()
        })
        .collect())
}

/// [`read_files`] on a store (read concurrently).
pub fn read_store_files(
    store: &ArchiveStore,
    session_id: &str,
    names: &[String],
) -> Result<Vec<Option<Value>>, HistoryError> {
    validate_session_id(session_id)?;
    check_names(names)?;
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
        let events = read_events(dir.path(), "s").unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1]["event"], "failed");
        assert!(read_events(dir.path(), "missing").unwrap().is_empty());

        fs::write(session.join("compact-20260101T000000Z-1.json"), "[1, 2]").unwrap();
        let names = vec![
            "compact-20260101T000000Z-1.json".to_string(),
            "compact-20260101T000000Z-1.meta.json".to_string(),
        ];
        let files = read_files(dir.path(), "s", &names).unwrap();
        assert_eq!(files, vec![Some(serde_json::json!([1, 2])), None]);
        for bad in [
            "../s/compact-20260101T000000Z-1.json",
            "events.jsonl",
            ".lock",
        ] {
            assert!(matches!(
                read_files(dir.path(), "s", &[bad.to_string()]),
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
            dir.path(),
            "s",
            &["compact-20260101T000000Z-1.json".to_string()],
        )
        .unwrap();
        assert_eq!(files, vec![None]);
    }
}
