//! The checkpoints a `Compactor` keeps between its compactions (SPEC §4.11), held here rather
//! than in JS: every `compact()` call, below the threshold too, would otherwise hand all of
//! them (each with its summary message) to the addon as JSON, a cost that grows with the
//! summaries. A shelf is a handle; the records stay native, are shared into a compaction by
//! reference (`Arc`), and the one a compaction makes or reuses is kept here by the call itself.

use context_compact_core::archive::checkpoint::Checkpoint;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How many checkpoint records a shelf keeps (a longer prefix supersedes what shorter ones
/// save, and each holds a summary message).
const MAX_CHECKPOINTS: usize = 8;

fn shelves() -> &'static Mutex<HashMap<u32, Vec<Arc<Checkpoint>>>> {
    static SHELVES: OnceLock<Mutex<HashMap<u32, Vec<Arc<Checkpoint>>>>> = OnceLock::new();
    SHELVES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A `Compactor`'s checkpoints (one shelf per compactor). Its records leave with it: they are
/// dropped when the shelf is garbage-collected.
#[napi]
pub struct CheckpointShelf {
    id: u32,
}

#[napi]
impl CheckpointShelf {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        shelves()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, Vec::new());
        CheckpointShelf { id }
    }

    /// The handle `compactJson` takes.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// How many records the shelf holds.
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        held(self.id).len() as u32
    }
}

impl Drop for CheckpointShelf {
    fn drop(&mut self) {
        shelves()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// The records of shelf `id`, oldest first (none for an unknown id).
pub(crate) fn held(id: u32) -> Vec<Arc<Checkpoint>> {
    shelves()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned()
        .unwrap_or_default()
}

/// Keeps `record` on shelf `id`: one per covered prefix, the most recent few.
pub(crate) fn keep(id: u32, record: &Checkpoint) {
    let mut shelves = shelves().lock().unwrap_or_else(|p| p.into_inner());
    let Some(kept) = shelves.get_mut(&id) else {
        return;
    };
    kept.retain(|c| c.prefix != record.prefix);
    kept.push(Arc::new(record.clone()));
    if kept.len() > MAX_CHECKPOINTS {
        let excess = kept.len() - MAX_CHECKPOINTS;
        kept.drain(..excess);
    }
}
