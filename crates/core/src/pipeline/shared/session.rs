//! What a compaction knows of the session before it writes anything, shared by the steps: the
//! summaries in the list the library wrote, a stand-in for the archive paths it will write,
//! and the format the list is read in.

use serde_json::Value;

use crate::formats::Format;
use crate::model::added;
use crate::options::CompactOptions;

/// The summaries and notices among `messages` that the library wrote (SPEC §11): those the
/// session's records name, and the checkpoints this call was given (a `Compactor`'s own). Any
/// other message that starts like one is the caller's text.
pub(crate) fn own_summaries(messages: &[Value], options: &CompactOptions) -> added::OwnSummaries {
    let known: Vec<&Value> = options
        .known_checkpoints
        .iter()
        .map(|checkpoint| &checkpoint.message)
        .collect();
    crate::archive::provenance::own_summaries(
        messages,
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        &known,
    )
}

/// A path at least as long as the archive paths this compaction will write, for counting the
/// draft before they exist.
pub(crate) fn stand_in_archive_path(options: &CompactOptions) -> String {
    const LONGEST_NAME: &str = "compact-20000101T000000Z-99999999999.json";
    if let Some(store) = &options.archive_store {
        return store.display_path(&options.session_id, LONGEST_NAME);
    }
    crate::archive::session_dir(&options.output_dir, &options.session_id)
        .join("compact-20000101T000000Z-99999999999.json")
        .display()
        .to_string()
}

/// The message format `options` read the list in (part of a checkpoint's identity).
pub(crate) fn format_name(options: &CompactOptions) -> &'static str {
    options.format.unwrap_or(Format::Native).name()
}
