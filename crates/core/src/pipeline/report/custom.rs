//! The records of a compaction a custom strategy made (a JavaScript `strategy`): the pipeline
//! records its own; a custom one says what it did, and the same records are written for it.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::options::CompactOptions;
use crate::pipeline::shared::outcome::CompactOutcome;

/// Records the compaction a custom strategy made: the audit line and, with `extractMemory`, the
/// key information of the `removed` messages (see [`super::record_external`]). `record` says
/// what it did: `{compacted, archivePath, stats, tokens, threshold, error, warnings}` (a field
/// missing or of another shape is read as none). Returns `{"warnings", "extracted"}`.
pub fn record_custom(options: &CompactOptions, removed: &[Value], record: &Value) -> Value {
    let mut outcome = CompactOutcome::skipped(
        record["tokens"].as_u64().unwrap_or(0) as usize,
        record["threshold"].as_u64().unwrap_or(0) as usize,
        serde_json::from_value(record["error"].clone()).ok(),
    );
    outcome.compacted = record["compacted"] == true;
    outcome.archive_path = record["archivePath"].as_str().map(PathBuf::from);
    outcome.stats = serde_json::from_value(record["stats"].clone()).unwrap_or_default();
    outcome.warnings = serde_json::from_value(record["warnings"].clone()).unwrap_or_default();
    outcome.provider = Some("custom".to_string());
    super::record_external(options, removed, &mut outcome);
    json!({ "warnings": outcome.warnings, "extracted": outcome.extracted })
}
