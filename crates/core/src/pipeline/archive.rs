//! Step 6, **archive**: what the compaction replaced goes into the session's next archive
//! (F-006), together with the originals of the kept messages it changed — those whose thinking
//! was removed and those the fit step shortened — so one compaction takes one sequence number
//! and `restoreMessages` gives back the original exactly. A write that fails is a warning (PRD
//! F-006), or the compaction's error with `requireArchive`.

use std::path::PathBuf;

use serde_json::Value;

use crate::archive::{self, Archive, KeptOriginals};
use crate::base::error::{CompactError, ErrorCode};
use crate::options::CompactOptions;
use crate::pipeline::shared::draft::{Draft, Replacement};
use crate::pipeline::shared::pieces::Fitting;

/// Where the archive went (`None`: not written, with a warning). `offload` and `thinking` are
/// that same archive when it holds originals of that kind (`keptOriginals.shortened`,
/// `keptOriginals.thinkingRemoved`), else `None`.
#[derive(Debug, Default)]
pub(crate) struct Archived {
    pub region: Option<PathBuf>,
    pub offload: Option<PathBuf>,
    /// The archive, when it holds the originals of the kept messages after the region whose
    /// thinking was removed.
    pub thinking: Option<PathBuf>,
    pub warnings: Vec<String>,
}

pub(crate) fn archive(
    messages: &[Value],
    draft: &Draft,
    fitting: &Fitting,
    options: &CompactOptions,
) -> Result<Archived, CompactError> {
    // In the order the markers number them (`keptOriginals.shortened[i]` is the i-th cut).
    let shortened: Vec<Value> = fitting
        .cuts
        .iter()
        .map(|(index, _)| messages[*index].clone())
        .collect();
    // In the order of the summary's thinking line.
    let thinking_removed: Vec<Value> = draft
        .stripped_after_region()
        .map(|s| messages[s.index].clone())
        .collect();
    let mut archived = Archived::default();
    // A reused checkpoint's messages are in the archive its summary names already. Only the
    // originals of the kept messages this compaction changed need one (with no messages of its
    // own); with none, nothing is written.
    let reused = match &draft.replacement {
        Replacement::Checkpoint(checkpoint) => Some(PathBuf::from(&checkpoint.archive_path)),
        _ => None,
    };
    if reused.is_some() && shortened.is_empty() && thinking_removed.is_empty() {
        archived.region = reused;
        return Ok(archived);
    }
    let contents = Archive {
        messages: if reused.is_some() {
            &[]
        } else {
            &messages[draft.region.clone()]
        },
        kept: KeptOriginals {
            thinking_removed: &thinking_removed,
            shortened: &shortened,
        },
    };
    match archive::session::persist_archive_in(
        &contents,
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
    ) {
        Ok(file) => {
            archived.offload = (!shortened.is_empty()).then(|| file.path.clone());
            archived.thinking = (!thinking_removed.is_empty()).then(|| file.path.clone());
            archived.region = Some(reused.unwrap_or(file.path));
        }
        Err(e) => {
            let mut what = format!(
                "{} {} messages",
                contents.messages.len(),
                draft.removed_what()
            );
            let changed = shortened.len() + thinking_removed.len();
            if changed > 0 {
                what.push_str(&format!(
                    " and the originals of the {changed} kept messages it changed"
                ));
            }
            let message = format!(
                "could not archive the {what} in {}: {e}",
                options.output_dir.display()
            );
            if options.require_archive {
                tracing::error!("{message}; compaction skipped (requireArchive)");
                return Err(CompactError::new(ErrorCode::ArchiveFailed, message));
            }
            tracing::warn!("{message}");
            archived.warnings.push(message);
        }
    }
    Ok(archived)
}
