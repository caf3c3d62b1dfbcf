//! Step 6, **archive**: the replaced region goes into the session's next archive (F-006), and
//! the originals of the messages the fit step shortened into one more, so `restoreMessages`
//! gives back the original exactly. A write that fails is a warning (PRD F-006), or the
//! compaction's error with `requireArchive`.

use std::path::PathBuf;

use serde_json::Value;

use super::fit::Fitting;
use super::{Draft, Replacement};
use crate::archive;
use crate::base::error::{CompactError, ErrorCode};
use crate::pipeline::options::CompactOptions;

/// Where the archives went (`None`: not written, with a warning).
#[derive(Debug, Default)]
pub(crate) struct Archived {
    pub region: Option<PathBuf>,
    pub offload: Option<PathBuf>,
    /// The originals of the kept messages after the region whose thinking was removed.
    pub thinking: Option<PathBuf>,
    pub warnings: Vec<String>,
}

pub(crate) fn archive(
    messages: &[Value],
    draft: &Draft,
    fitting: &Fitting,
    options: &CompactOptions,
) -> Result<Archived, CompactError> {
    let mut archived = Archived::default();
    let region = &messages[draft.region.clone()];
    archived.region = match &draft.replacement {
        // A checkpoint's messages are in the archive its summary names already.
        Replacement::Checkpoint(checkpoint) => Some(PathBuf::from(&checkpoint.archive_path)),
        _ => persist(
            region,
            draft.removed_what(),
            options,
            &mut archived.warnings,
        )?,
    };
    if !fitting.cuts.is_empty() {
        let originals: Vec<Value> = fitting
            .cuts
            .iter()
            .map(|(index, _)| messages[*index].clone())
            .collect();
        archived.offload = persist(&originals, "shortened", options, &mut archived.warnings)?;
    }
    let changed: Vec<Value> = draft
        .stripped_after_region()
        .map(|s| messages[s.index].clone())
        .collect();
    if !changed.is_empty() {
        archived.thinking = persist(
            &changed,
            "kept (thinking removed)",
            options,
            &mut archived.warnings,
        )?;
    }
    Ok(archived)
}

fn persist(
    messages: &[Value],
    what: &str,
    options: &CompactOptions,
    warnings: &mut Vec<String>,
) -> Result<Option<PathBuf>, CompactError> {
    match archive::persist_in(
        messages,
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
    ) {
        Ok(file) => Ok(Some(file.path)),
        Err(e) => {
            let message = format!(
                "could not archive the {} {what} messages in {}: {e}",
                messages.len(),
                options.output_dir.display()
            );
            if options.require_archive {
                tracing::error!("{message}; compaction skipped (requireArchive)");
                return Err(CompactError::new(ErrorCode::ArchiveFailed, message));
            }
            tracing::warn!("{message}");
            warnings.push(message);
            Ok(None)
        }
    }
}
