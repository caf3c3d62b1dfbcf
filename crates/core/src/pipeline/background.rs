//! A summary prepared ahead of the threshold (SPEC §4.11, a `Compactor` with `background`), as
//! the caller gives it back in the options: what it is and what it covers, and whether it still
//! stands for the start of a list (`check`). `resume::precompute` (the layer around the steps)
//! makes one; the summarize step uses it in place of the summary call.

use serde_json::Value;

use crate::archive::checkpoint::PrefixHashes;

pub use crate::options::precomputed::{Precomputed, PrecomputedSummary, PRECOMPUTED_VERSION};

/// Whether `precomputed` still stands for the start of `messages`: the same format, and every
/// message it covers — the head and the summarized ones — unchanged, by content. `Ok`: the
/// hashes of those messages (the checkpoint of the compaction goes on from them); `Err` says
/// why not (the reason reported with the `background_stale` event).
pub(crate) fn check(
    precomputed: &Precomputed,
    messages: &[Value],
    format: &str,
) -> Result<PrefixHashes, &'static str> {
    if precomputed.version != PRECOMPUTED_VERSION || precomputed.format != format {
        return Err("format_changed");
    }
    if precomputed.head_length >= precomputed.covered_messages {
        return Err("covered_changed");
    }
    if messages.len() < precomputed.covered_messages {
        return Err("covered_gone");
    }
    let hashes = PrefixHashes::up_to(messages, format, precomputed.covered_messages);
    if hashes.hex(precomputed.head_length).as_deref() != Some(precomputed.head_prefix.as_str()) {
        return Err("head_changed");
    }
    if hashes.hex(precomputed.covered_messages).as_deref() != Some(precomputed.prefix.as_str()) {
        return Err("covered_changed");
    }
    Ok(hashes)
}
