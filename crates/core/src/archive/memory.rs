//! The session's extracted memory (SanBot's key-information extraction: decisions, facts,
//! preferences, runtime), added to without duplicate lines. What goes in it is found by
//! [`crate::carry::memory::extract`]; this module only keeps it, on any storage: on disk the
//! files `extracted/<kind>.md`, appended to under the session's lock; on a store one object per
//! kind and compaction, `extracted/<kind>/<instant>-<random>.md`, since objects cannot be
//! appended to.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use super::audit::read_record;
use super::store::fs::LOCK_FILE;
use super::store::ArchiveStore;
use super::{instant_name, invalid_session, random_suffix};
use crate::carry::memory::{Extracted, Memory, EXTRACTED_DIR};

/// [`write_memory`] to a session: on `store` when there is one, else in its directory under
/// `output_dir`.
pub fn write_in(
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
    memory: &Memory,
) -> io::Result<Extracted> {
    write_memory(&ArchiveStore::at(output_dir, store), session_id, memory)
}

/// [`write_memory`] to the session's directory under `output_dir`.
pub fn write(output_dir: &Path, session_id: &str, memory: &Memory) -> io::Result<Extracted> {
    write_in(output_dir, None, session_id, memory)
}

/// Records what is new in `memory`: only lines no earlier record of that kind has, so repeated
/// compactions never duplicate a line.
pub fn write_memory(
    store: &ArchiveStore,
    session_id: &str,
    memory: &Memory,
) -> io::Result<Extracted> {
    super::validate_session_id(session_id).map_err(invalid_session)?;
    let mut counts = [0usize; 4];
    let instant = instant_name();
    let mut write = || -> io::Result<()> {
        for (n, (file, title, lines)) in memory.files().into_iter().enumerate() {
            if lines.is_empty() {
                continue;
            }
            let kind = file.trim_end_matches(".md");
            let on_disk = format!("{EXTRACTED_DIR}/{file}");
            let objects = format!("{EXTRACTED_DIR}/{kind}");
            let chunks = read_record(store, session_id, &on_disk, &objects)?;
            let existing: HashSet<String> = chunks
                .iter()
                .flat_map(|chunk| {
                    String::from_utf8_lossy(chunk)
                        .lines()
                        .filter_map(|l| l.strip_prefix("- "))
                        .map(|l| l.trim().to_string())
                        .collect::<Vec<_>>()
                })
                .collect();
            let mut text = match (store.disk(), chunks.is_empty()) {
                // A file starts with its title once; each object has its own.
                (Some(_), true) => format!(
                    "# {title}\n\nExtracted by context-compact from compacted conversation.\n\n"
                ),
                (Some(_), false) => String::new(),
                (None, _) => format!("# {title}\n\n"),
            };
            for line in lines.iter().filter(|l| !existing.contains(l.trim())) {
                text.push_str("- ");
                text.push_str(line);
                text.push('\n');
                counts[n] += 1;
            }
            if counts[n] == 0 {
                continue;
            }
            match store.disk() {
                // The session's lock is held (below).
                Some(disk) => disk.append(&store.key(&[session_id, &on_disk]), text.as_bytes())?,
                None => {
                    let name = format!("{instant}-{}.md", random_suffix());
                    store.put_new(
                        &store.key(&[session_id, &objects, &name]),
                        text.into_bytes(),
                    )?
                }
            }
        }
        Ok(())
    };
    match store.disk() {
        Some(disk) => disk.with_lock(&store.session_key(session_id), LOCK_FILE, |_| write())?,
        None => write()?,
    }
    Ok(Extracted {
        decisions: counts[0],
        facts: counts[1],
        preferences: counts[2],
        runtime: counts[3],
        dir: PathBuf::from(store.display_path(session_id, EXTRACTED_DIR)),
    })
}
