//! What a compaction leaves beside its archive (the SanBot seed's "auditable and reversible"),
//! said of the pipeline's outcome: the metadata file, the summary appended to the session's
//! summaries, and one audit line per attempt. The archive layer ([`crate::archive`]) only writes
//! them where the session keeps its records. None of these may stop a compaction: a failure to
//! write them is a warning. Below the threshold nothing is written at all.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::archive::{
    parse_archive_name, timestamp_to_rfc3339, Records, EVENTS_FILE, SUMMARIES_FILE,
};
use crate::base::error::ErrorCode;
use crate::options::CompactOptions;
use crate::pipeline::shared::outcome::{CompactOutcome, CompactStats};

/// A half-open range of message indices (`end` excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IndexRange {
    pub start: usize,
    pub end: usize,
}

/// The content of `compact-…-N.meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveMeta {
    /// The format of this file (1).
    pub version: u32,
    pub session_id: String,
    pub sequence: u64,
    /// When the archive was written (RFC 3339, UTC; the instant of the file name).
    pub created_at: String,
    /// The archive's file name (in the same directory).
    pub archive: String,
    /// The summarizer (`anthropic`, `openai`, `extractive`, `custom`).
    pub provider: Option<String>,
    pub model: Option<String>,
    pub head_count: usize,
    pub middle_count: usize,
    pub tail_count: usize,
    /// Where the archived messages were in the list given to that compaction.
    pub middle: IndexRange,
    /// Tokens the trigger saw, and the threshold.
    pub tokens: usize,
    pub threshold: usize,
    pub stats: CompactStats,
    pub attempts: u32,
    /// The whole content of the summary message that replaced the middle.
    pub summary: String,
    /// The identity of the message that stands for this archive (the summary or notice): the
    /// SHA-256 of its text without a thinking line, lowercase hex. It is what makes that message
    /// the library's to a later compaction and to `restoreMessages` (SPEC §11); a message that
    /// only starts like a summary has no record.
    #[serde(
        rename = "summaryMessageSha256",
        skip_serializing_if = "Option::is_none"
    )]
    pub summary_message_sha256: Option<String>,
    /// The ledger of everything the summary stands for, whole: the summary carries it within
    /// its share of the budget, and the recall tool answers `ledger: true` from these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
}

/// Records a finished compaction call: metadata and summary file when it compacted, and one
/// audit line for every outcome except "below the threshold" (not compacted, no error), which
/// writes nothing. Failures become warnings on the outcome.
pub(crate) fn record_outcome(options: &CompactOptions, outcome: &mut CompactOutcome) {
    let strategy = outcome.strategy.as_str();
    record_outcome_as(options, outcome, strategy);
}

/// [`record_outcome`] for a compaction whose strategy is named `strategy` in the audit line
/// (`custom` for a JS strategy's, which the pipeline did not make).
pub(crate) fn record_outcome_as(
    options: &CompactOptions,
    outcome: &mut CompactOutcome,
    strategy: &str,
) {
    let (event, code) = if outcome.compacted {
        ("compacted", None)
    } else {
        match &outcome.error {
            None => return,
            Some(error) => (
                match error.code {
                    ErrorCode::Declined => "declined",
                    ErrorCode::NothingToCompact => "skipped",
                    _ => "failed",
                },
                Some(error.code.as_str()),
            ),
        }
    };
    let records = Records::new(
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
    );
    let archive_name = outcome
        .archive_path
        .as_ref()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(str::to_string);
    let mut problems: Vec<String> = Vec::new();
    let fields = audit_fields(outcome, strategy, code, archive_name.as_deref());
    // A reused checkpoint's archive has its metadata and summary recorded already.
    let reused = outcome
        .checkpoint
        .as_ref()
        .is_some_and(|c| c.reused && !c.extended);
    if outcome.compacted && !reused {
        if let (Some(name), Some(meta)) = (archive_name.as_deref(), build_meta(options, outcome)) {
            if let Err(e) = records.meta(name, &meta) {
                problems.push(format!("could not write the metadata of {name}: {e}"));
            }
        }
        if let Some(summary) = &outcome.summary {
            if let Err(e) = records.summary(archive_name.as_deref(), summary) {
                problems.push(format!("could not append to {SUMMARIES_FILE}: {e}"));
            }
        }
    }
    if let Err(e) = records.event(event, fields) {
        problems.push(format!("could not append to {EVENTS_FILE}: {e}"));
    }

    // When the archive itself could not be written, the result already carries a warning about
    // that directory; the audit failing there too is the same problem, so it is only logged.
    let archive_failed = (outcome.compacted && outcome.archive_path.is_none())
        || outcome
            .error
            .as_ref()
            .is_some_and(|e| e.code == ErrorCode::ArchiveFailed);
    for problem in problems {
        if archive_failed {
            tracing::debug!("{problem}");
        } else {
            tracing::warn!("{problem}");
            outcome.warnings.push(problem);
        }
    }
}

/// The fields of the audit line of `outcome`: why it ran and how, what it did and cost.
fn audit_fields(
    outcome: &CompactOutcome,
    strategy: &str,
    code: Option<&str>,
    archive_name: Option<&str>,
) -> Map<String, Value> {
    let mut fields = Map::new();
    // A compaction whose result is still over the threshold says so here too.
    let code = code.or_else(|| outcome.error.as_ref().map(|e| e.code.as_str()));
    if let Some(code) = code {
        fields.insert("code".into(), json!(code));
        fields.insert(
            "reason".into(),
            json!(outcome.error.as_ref().map(|e| e.message.as_str())),
        );
    }
    fields.insert("tokens".into(), json!(outcome.trigger_tokens));
    fields.insert("threshold".into(), json!(outcome.threshold_tokens));
    // Why it ran and how: what a reader of the log (a session report) shows for each attempt.
    if let Some(trigger) = outcome.trigger {
        fields.insert("trigger".into(), json!(trigger.as_str()));
    }
    if let Some(measure) = &outcome.measure {
        fields.insert("estimate".into(), json!(measure.source));
    }
    fields.insert("strategy".into(), json!(strategy));
    if outcome.fallback {
        fields.insert("fallback".into(), json!(true));
    }
    if outcome.rounds > 1 {
        fields.insert("rounds".into(), json!(outcome.rounds));
    }
    if outcome.compacted {
        fields.insert("archive".into(), json!(archive_name));
        fields.insert(
            "sequence".into(),
            json!(archive_name.and_then(parse_archive_name).map(|(_, s)| s)),
        );
        fields.insert("stats".into(), json!(outcome.stats));
        if let Some(offload) = &outcome.offload_archive_path {
            fields.insert(
                "offloadArchive".into(),
                json!(offload.file_name().and_then(|n| n.to_str())),
            );
            fields.insert("offloaded".into(), json!(outcome.offloaded.len()));
        }
        if let Some(thinking) = &outcome.thinking_archive_path {
            fields.insert(
                "thinkingArchive".into(),
                json!(thinking.file_name().and_then(|n| n.to_str())),
            );
            fields.insert(
                "transformations".into(),
                json!(outcome.transformations.len()),
            );
        }
    }
    if outcome.provider.is_some() {
        fields.insert("provider".into(), json!(outcome.provider));
        fields.insert("model".into(), json!(outcome.model));
        fields.insert("attempts".into(), json!(outcome.attempts));
    }
    // What the summary calls cost, as the provider billed them (also for a failed attempt).
    if let Some(usage) = &outcome.summary_usage {
        fields.insert("summaryUsage".into(), json!(usage));
    }
    if let Some(kind) = outcome.summary_request {
        fields.insert("summaryRequest".into(), json!(kind));
    }
    if !outcome.warnings.is_empty() {
        fields.insert("warnings".into(), json!(outcome.warnings));
    }

    if let Some(checkpoint) = &outcome.checkpoint {
        fields.insert("checkpoint".into(), json!(checkpoint));
    }
    fields
}

/// Records a compaction the caller aborted (its `signal` fired).
pub(crate) fn record_aborted(options: &CompactOptions) {
    let mut fields = Map::new();
    fields.insert("code".into(), json!("ABORTED"));
    fields.insert(
        "reason".into(),
        json!("the caller aborted the compaction (signal)"),
    );
    if let Err(e) = Records::new(
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
    )
    .event("failed", fields)
    {
        tracing::warn!("could not append to {EVENTS_FILE}: {e}");
    }
}

fn build_meta(options: &CompactOptions, outcome: &CompactOutcome) -> Option<ArchiveMeta> {
    let path = outcome.archive_path.as_ref()?;
    let name = path.file_name()?.to_str()?;
    let (timestamp, sequence) = parse_archive_name(name)?;
    let plan = outcome.partition?;
    let total = outcome.stats.retained_message_count
        + outcome.stats.compacted_message_count
        + outcome.stats.removed_message_count;
    Some(ArchiveMeta {
        version: 1,
        session_id: options.session_id.clone(),
        sequence,
        created_at: timestamp_to_rfc3339(timestamp).unwrap_or_else(|| timestamp.to_string()),
        archive: name.to_string(),
        provider: outcome.provider.clone(),
        model: outcome.model.clone(),
        head_count: plan.head_len,
        middle_count: plan.tail_start - plan.head_len,
        tail_count: total.saturating_sub(plan.tail_start),
        middle: IndexRange {
            start: plan.head_len,
            end: plan.tail_start,
        },
        tokens: outcome.trigger_tokens,
        threshold: outcome.threshold_tokens,
        stats: outcome.stats,
        attempts: outcome.attempts,
        summary: outcome.summary.clone().unwrap_or_default(),
        summary_message_sha256: match outcome.pieces.get(plan.head_len) {
            Some(crate::pipeline::shared::outcome::Piece::New(message)) => {
                crate::model::added::summary_identity_hex(message)
            }
            _ => None,
        },
        ledger: outcome.full_ledger.clone(),
    })
}
