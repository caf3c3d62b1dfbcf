//! The session's extracted memory (SanBot's key-information extraction: `decisions.md`,
//! `facts.md`, `preferences.md`, `runtime.md`), appended without duplicate lines. What goes in
//! them is found by [`crate::carry::memory::extract`]; this module only keeps them.

use std::collections::HashSet;
use std::io::{self, Read};
use std::path::Path;

use super::store::ArchiveStore;
use crate::carry::memory::{Extracted, Memory, EXTRACTED_DIR};

/// The `- ` lines already in a file (none when it does not exist).
fn existing_lines(path: &Path) -> io::Result<HashSet<String>> {
    let mut text = String::new();
    match super::open_no_follow(path) {
        Ok(file) => {
            file.take(64 * 1024 * 1024).read_to_string(&mut text)?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Ok(text
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.trim().to_string())
        .collect())
}

/// [`write`] to a session: on `store` when there is one ([`super::store::session::write_memory`]),
/// else in its directory under `output_dir`.
pub fn write_in(
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
    memory: &Memory,
) -> io::Result<Extracted> {
    match store {
        Some(store) => super::store::session::write_memory(store, session_id, memory),
        None => write(output_dir, session_id, memory),
    }
}

/// Appends what is new in `memory` to the session's extracted files.
pub fn write(output_dir: &Path, session_id: &str, memory: &Memory) -> io::Result<Extracted> {
    super::validate_session_id(session_id)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let session = super::session_dir(output_dir, session_id);
    let dir = session.join(EXTRACTED_DIR);
    super::create_private_dir(&dir)?;
    let mut counts = [0usize; 4];
    super::with_session_lock(&session, |_| {
        for (n, (name, title, lines)) in memory.files().into_iter().enumerate() {
            if lines.is_empty() {
                continue;
            }
            let path = dir.join(name);
            let existing = existing_lines(&path)?;
            let mut text = String::new();
            if existing.is_empty() && !path.exists() {
                text.push_str(&format!(
                    "# {title}\n\nExtracted by context-compact from compacted conversation.\n\n"
                ));
            }
            for line in lines.iter().filter(|l| !existing.contains(l.trim())) {
                text.push_str("- ");
                text.push_str(line);
                text.push('\n');
                counts[n] += 1;
            }
            if counts[n] > 0 || !path.exists() {
                super::append(&dir, name, &text)?;
            }
        }
        Ok(())
    })?;
    Ok(Extracted {
        decisions: counts[0],
        facts: counts[1],
        preferences: counts[2],
        runtime: counts[3],
        dir,
    })
}
