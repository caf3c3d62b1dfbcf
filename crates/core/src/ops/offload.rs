//! `offloadToolResults` on its own (PRD UC-004): the fit step's shortening
//! ([`crate::plan::offload`]) as an operation of its own, with its own archive (and so its own
//! sequence number) for the originals.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::archive;
use crate::base::error::{CompactError, ErrorCode};
use crate::formats::Input;
use crate::model::piece::Piece;
use crate::model::tokens::Encoding;
use crate::options::CompactOptions;
use crate::plan::offload::{
    apply_cuts, cuts_by_message, find_sites, Offloaded, OriginalRef, Scope, MARKER_TOKENS,
    MIN_KEPT_TOKENS,
};

/// What [`offload_tool_results`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct OffloadOutcome {
    /// The new list: the input's messages by index, shortened copies where something was cut.
    pub pieces: Vec<Piece>,
    pub offloaded: Vec<Offloaded>,
    /// The archive holding the originals of the shortened messages.
    pub archive_path: Option<PathBuf>,
    /// `ARCHIVE_FAILED`: the originals could not be archived, so nothing was shortened.
    pub error: Option<CompactError>,
}

/// `offloadToolResults`: every text in `scope` longer than `max_tokens` is shortened to about
/// `max_tokens` (its head and end, and the marker), the originals archived in the session's
/// next archive. Nothing is shortened when the archive cannot be written: a shortened message
/// whose original is lost could not be restored.
pub fn offload_tool_results(
    messages: &[Value],
    max_tokens: usize,
    scope: Scope,
    output_dir: &Path,
    session_id: &str,
    encoding: Encoding,
) -> OffloadOutcome {
    offload_tool_results_in(
        messages, max_tokens, scope, output_dir, None, session_id, encoding,
    )
}

/// `offloadToolResults` on a list read in its format, with the caller's options (`offload`:
/// the scope; the archive's place, session and encoding): `{"pieces", "offloaded",
/// "archivePath", "error"}`, the pieces said of the caller's items.
pub fn offload_input(input: &Input, max_tokens: usize, options: &CompactOptions) -> Value {
    let mut outcome = offload_tool_results_in(
        input.messages(),
        max_tokens,
        options.offload,
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        options.encoding,
    );
    let view_pieces = std::mem::take(&mut outcome.pieces);
    json!({
        "pieces": input.pieces(view_pieces),
        "offloaded": outcome.offloaded,
        "archivePath": outcome.archive_path.map(|p| p.display().to_string()),
        "error": outcome.error,
    })
}

/// [`offload_tool_results`] archiving into `store` when there is one (see
/// [`archive::session::persist_in`]).
pub fn offload_tool_results_in(
    messages: &[Value],
    max_tokens: usize,
    scope: Scope,
    output_dir: &Path,
    store: Option<&crate::archive::store::ArchiveStore>,
    session_id: &str,
    encoding: Encoding,
) -> OffloadOutcome {
    let mut outcome = OffloadOutcome {
        pieces: (0..messages.len()).map(Piece::Original).collect(),
        offloaded: Vec::new(),
        archive_path: None,
        error: None,
    };
    let keep = max_tokens
        .saturating_sub(MARKER_TOKENS)
        .max(MIN_KEPT_TOKENS);
    let sites = find_sites(messages, 0..messages.len(), scope, encoding);
    let plan: Vec<(usize, usize)> = sites
        .iter()
        .enumerate()
        .filter(|(_, site)| site.tokens > max_tokens && site.tokens > keep + MARKER_TOKENS)
        .map(|(i, _)| (i, keep))
        .collect();
    if plan.is_empty() {
        return outcome;
    }
    let cuts = cuts_by_message(&sites, &plan);
    let originals: Vec<Value> = cuts.iter().map(|(i, _)| messages[*i].clone()).collect();
    let path = match archive::session::persist_in(&originals, output_dir, store, session_id) {
        Ok(file) => file.path,
        Err(e) => {
            outcome.error = Some(CompactError::new(
                ErrorCode::ArchiveFailed,
                format!(
                    "could not archive the {} messages to shorten in {}: {e}; nothing was shortened",
                    originals.len(),
                    output_dir.display()
                ),
            ));
            return outcome;
        }
    };
    let archive_ref = path.display().to_string();
    for (item, (index, message_cuts)) in cuts.iter().enumerate() {
        let original = OriginalRef {
            archive: Some(&archive_ref),
            item,
            kept_originals: false,
        };
        let (message, counts) = apply_cuts(&messages[*index], message_cuts, &original, encoding);
        for ((site, _), tokens) in message_cuts.iter().zip(counts) {
            outcome.offloaded.push(Offloaded {
                index: *index,
                original_index: *index,
                path: site.path_at(*index),
                original_tokens: site.tokens,
                tokens,
                kind: if site.tool_result {
                    "tool_result"
                } else {
                    "text"
                },
            });
        }
        outcome.pieces[*index] = Piece::New(message);
    }
    outcome.archive_path = Some(path);
    outcome
}
