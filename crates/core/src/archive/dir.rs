//! The session operations on the directory `outputDir`, for callers without a store: each is
//! the one of [`super::session`] over the directory as a local store.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::session::{self, ArchiveInfo, PruneOptions, PruneReport, Restored};
use super::store::ArchiveStore;
use super::{Archive, ArchiveFile, HistoryError};

/// Persists `middle` as the next archive of the session in the directory `output_dir` (PRD
/// F-006) and returns where it went.
pub fn persist_messages(
    middle: &[Value],
    output_dir: &Path,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    session::persist_in(middle, output_dir, None, session_id)
}

/// Persists what one compaction archives as the next archive of the session in the directory
/// `output_dir`, under one sequence number, and returns where it went.
pub fn persist_archive(
    archive: &Archive<'_>,
    output_dir: &Path,
    session_id: &str,
) -> io::Result<ArchiveFile> {
    session::persist_archive_in(archive, output_dir, None, session_id)
}

/// The archives of the session in the directory `output_dir` ([`session::list_archives`]).
pub fn list_archives(
    output_dir: &Path,
    session_id: &str,
) -> Result<Vec<ArchiveInfo>, HistoryError> {
    session::list_archives(&ArchiveStore::local(output_dir), session_id)
}

/// Restores from the session in the directory `output_dir` ([`session::restore_messages`]).
pub fn restore_messages(
    messages: &[Value],
    output_dir: &Path,
    session_id: &str,
) -> Result<Vec<Restored>, HistoryError> {
    session::restore_messages(&ArchiveStore::local(output_dir), messages, session_id)
}

/// Prunes the sessions in the directory `output_dir` ([`session::prune_archives`]).
pub fn prune_archives(
    output_dir: &Path,
    options: &PruneOptions,
) -> Result<PruneReport, HistoryError> {
    session::prune_archives(&ArchiveStore::local(output_dir), options)
}
