//! **Checkpoints** (SPEC §4.11): a compaction is never paid for twice. What stands for the start
//! of the list is looked up once a compaction fires (`Start`); the plan and summarize steps
//! use it; a compaction that summarized records its checkpoint after the report.
//!
//! - **Background.** A summary prepared before the threshold ([`super::precompute`]) is used
//!   when the messages it covers are unchanged, in place of the summary call; otherwise it is
//!   dropped (`stale`) and never archived.
//! - **Reuse.** A summary compaction records a checkpoint ([`crate::archive::checkpoint`]): the
//!   prefix it covered, by content, and its summary message. A later call on a list starting
//!   with that prefix — the same process (a `Compactor` passes its own) or another one sharing
//!   the archive location — gets the head, the same summary message byte for byte, and the
//!   rest of its list, with no LLM call; the steps after the summary run as for any compaction
//!   (the thinking policy, fit, the post-condition, the records).
//! - **Extend.** When the list is still over the threshold with the checkpoint in place,
//!   compaction goes on from it: the list "head + checkpoint summary + rest" is compacted as
//!   any list holding an earlier summary is (UC-002: the summary is updated with what followed,
//!   an LLM call for those messages only), its archive holds the earlier summary and the
//!   messages it adds (restore follows both), and a new checkpoint covers the longer prefix.
//!
//! Only the `summary` strategy reads and records checkpoints (the strategies without a summary
//! cost no LLM call); a custom JS strategy never reaches this step.
//!
//! **Checked before reuse** (SPEC §11): see `reuse.rs`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::reuse::{find, summarizer_config};
use crate::archive::checkpoint::{self as store, Checkpoint, PrefixHashes, CHECKPOINT_VERSION};
use crate::base::error::{CompactError, ErrorCode};
use crate::model::added;
use crate::model::tokens;
use crate::options::CompactOptions;
use crate::pipeline::background::{self, Precomputed};
use crate::pipeline::hooks::{BeforeCompactInfo, CompactHooks, Confirmation};
use crate::pipeline::measure::Measured;
use crate::pipeline::report::reporter::completed_event;
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::draft::{Draft, Replacement};
use crate::pipeline::shared::outcome::{BackgroundReport, CheckpointReport, CompactOutcome, Piece};
use crate::pipeline::shared::session::{format_name, stand_in_archive_path};
use crate::pipeline::Resume;
use crate::plan::partition::Partition;
use crate::plan::strategy::Strategy;
use crate::summary::summarize::{BoxFuture, Summarizer};

/// Whether checkpoints are read and recorded for these options.
fn applies(options: &CompactOptions) -> bool {
    options.checkpoints && options.strategy == Strategy::Summary
}

/// What may stand for the start of the list, looked up once a compaction fires: a summary
/// prepared in the background whose messages are unchanged, else (with checkpoints on) the
/// checkpoint covering the longest prefix that may be reused.
pub(crate) struct Start<'a> {
    /// The summary prepared in the background, still standing for the start.
    pub precomputed: Option<&'a Precomputed>,
    /// The checkpoint that stands for the start.
    pub checkpoint: Option<Arc<Checkpoint>>,
    /// The list's prefixes hashed so far, for the checkpoint this compaction records.
    hashes: Option<PrefixHashes>,
    /// Checkpoints set aside, each a warning.
    ignored: Vec<String>,
    /// The summary prepared in the background, when it no longer stands (why).
    stale: Option<BackgroundReport>,
}

impl<'a> Start<'a> {
    /// Nothing stands for the start (the list with a checkpoint in place, compacted further).
    pub fn none() -> Self {
        Start {
            precomputed: None,
            checkpoint: None,
            hashes: None,
            ignored: Vec::new(),
            stale: None,
        }
    }

    /// Looks up what stands for the start of `call`'s list (see the module docs).
    pub fn look_up(call: &Call<'a>) -> Self {
        let options = call.options;
        let mut start = Start::none();
        if let Some(pre) = options.precomputed.as_deref() {
            match usable(pre, call.messages, call.counts, call.measured, options) {
                Ok(hashes) => {
                    start.precomputed = Some(pre);
                    start.hashes = Some(hashes);
                }
                Err(reason) => {
                    start.stale = Some(BackgroundReport {
                        state: "stale",
                        reason: Some(reason),
                        covered_messages: pre.covered_messages,
                    })
                }
            }
        }
        if start.precomputed.is_none() && applies(options) {
            let format = format_name(options);
            let hashes = PrefixHashes::of(call.messages, format);
            let (found, ignored) = find(&hashes, format, options, call.summarizer);
            start.checkpoint = found;
            start.ignored = ignored;
            start.hashes = Some(hashes);
        }
        start
    }

    /// What the steps see of it, and `resume` to go on from the checkpoint.
    pub fn for_steps(&self, resume: &'a dyn Resume) -> crate::pipeline::Start<'a> {
        crate::pipeline::Start {
            precomputed: self.precomputed,
            checkpoint: self.checkpoint.clone(),
            resume: Some(resume),
        }
    }

    /// After the report: the checkpoint of a compaction that summarized the start of the list
    /// (one that reused a checkpoint recorded none, or its own already), then the held
    /// `completed` event, what was set aside, and what became of the background summary.
    pub fn close(self, call: &Call<'_>, held: &Held<'_>, outcome: &mut CompactOutcome) {
        if self.checkpoint.is_none() && applies(call.options) {
            record(
                call.messages,
                self.hashes,
                call.options,
                call.summarizer,
                outcome,
            );
        }
        held.release(outcome);
        outcome.warnings.extend(self.ignored);
        outcome.background = match self.precomputed {
            Some(pre) => Some(BackgroundReport {
                // Not applied when the compaction did not go through (declined, not smaller):
                // it was never archived.
                state: if outcome.compacted {
                    "applied"
                } else {
                    "unused"
                },
                reason: None,
                covered_messages: pre.covered_messages,
            }),
            None => self.stale,
        };
    }
}

/// Whether a precomputed summary can be used for `messages`: what it covers unchanged
/// ([`precompute::check`]) and, for Anthropic's compaction block (which cannot be folded
/// further), the list with it in place under the threshold (`grown` otherwise: the block
/// would leave the result over it, and a fresh compaction of the whole middle does not).
fn usable(
    pre: &Precomputed,
    messages: &[Value],
    counts: &[usize],
    measured: &Measured,
    options: &CompactOptions,
) -> Result<PrefixHashes, &'static str> {
    let hashes = background::check(pre, messages, format_name(options))?;
    if let Some(native) = pre.native() {
        let region = native.region.clone();
        let replacement = Replacement::Native(native);
        let draft = Draft::new(region, replacement, options, added::OwnSummaries::none());
        let stand_in = stand_in_archive_path(options);
        let message = draft.replacement_message(messages, Some(&stand_in), None);
        let tokens = counts[..pre.head_length].iter().sum::<usize>()
            + tokens::count_message(options.encoding, &message)
            + counts[pre.covered_messages..].iter().sum::<usize>();
        if measured.estimator.over(tokens) {
            return Err("grown");
        }
    }
    Ok(hashes)
}

/// Step 3 with a checkpoint: says it is reused (`checkpoint_reused`), and whether the list
/// with it in place is still over the threshold — then compaction goes on from it.
pub(crate) fn reused(call: &Call<'_>, checkpoint: &Checkpoint) -> bool {
    let head = checkpoint.head_length;
    let covered = checkpoint.covered_messages;
    let message_tokens = tokens::count_message(call.options.encoding, &checkpoint.message);
    let reduced_tokens = call.counts[..head].iter().sum::<usize>()
        + message_tokens
        + call.counts[covered..].iter().sum::<usize>();
    let extend = call.measured.estimator.over(reduced_tokens);
    call.hooks.event(json!({
        "type": "checkpoint_reused",
        "coveredMessages": covered,
        "archivePath": checkpoint.archive_path,
        "extended": extend,
    }));
    extend
}

/// The list with `checkpoint` in place — its head, its summary message, then the rest of the
/// call's list after the messages it covers — and its token counts.
pub(crate) fn in_place(call: &Call<'_>, checkpoint: &Checkpoint) -> (Vec<Value>, Vec<usize>) {
    let (messages, counts) = (call.messages, call.counts);
    let head = checkpoint.head_length;
    let covered = checkpoint.covered_messages;
    let mut reduced: Vec<Value> = Vec::with_capacity(messages.len() - covered + head + 1);
    reduced.extend_from_slice(&messages[..head]);
    reduced.push(checkpoint.message.clone());
    reduced.extend_from_slice(&messages[covered..]);
    let mut reduced_counts: Vec<usize> = Vec::with_capacity(reduced.len());
    reduced_counts.extend_from_slice(&counts[..head]);
    reduced_counts.push(tokens::count_message(
        call.options.encoding,
        &checkpoint.message,
    ));
    reduced_counts.extend_from_slice(&counts[covered..]);
    (reduced, reduced_counts)
}

/// The outcome of the compaction that went on from `checkpoint` (`outcome`, of the list with
/// it in place), said of the call's list, its checkpoint recorded and the `completed` event
/// emitted. `Err`: that compaction did not go through — why, for the warning of the
/// compaction that reuses the checkpoint alone.
pub(crate) fn extended(
    call: &Call<'_>,
    checkpoint: &Checkpoint,
    outcome: CompactOutcome,
) -> Result<CompactOutcome, String> {
    if !outcome.compacted {
        let error = outcome.error.unwrap_or_else(|| {
            CompactError::new(ErrorCode::NothingToCompact, "nothing more to compact")
        });
        // What the checkpoint alone gives is still far smaller than the input: it stands,
        // with the post-condition saying how far over it is.
        return Err(format!(
            "compaction could not go on from the checkpoint ({}): {}",
            error.code, error.message
        ));
    }
    let mut outcome = said_of_input(outcome, call.messages, call.counts, checkpoint);
    record(
        call.messages,
        None,
        call.options,
        call.summarizer,
        &mut outcome,
    );
    let covered = checkpoint.covered_messages;
    if let Some(report) = outcome.checkpoint.as_mut() {
        report.reused = true;
        report.extended = true;
        report.covered_messages = covered;
        report.archive_path = checkpoint.archive_path.clone();
    } else {
        outcome.checkpoint = Some(CheckpointReport {
            reused: true,
            extended: true,
            covered_messages: covered,
            archive_path: checkpoint.archive_path.clone(),
            recorded: false,
        });
    }
    call.hooks.event(completed_event(&outcome));
    Ok(outcome)
}

/// The caller's hooks with the `completed` event held back until the checkpoint is recorded,
/// so that it stays the call's last event and says what checkpoints did.
pub(crate) struct Held<'a> {
    hooks: &'a dyn CompactHooks,
    completed: std::sync::Mutex<bool>,
}

impl<'a> Held<'a> {
    pub fn new(hooks: &'a dyn CompactHooks) -> Self {
        Held {
            hooks,
            completed: std::sync::Mutex::new(false),
        }
    }

    /// Emits the held `completed` event, said of the final `outcome`.
    pub fn release(&self, outcome: &CompactOutcome) {
        let held = std::mem::take(&mut *self.completed.lock().unwrap_or_else(|p| p.into_inner()));
        if held {
            self.hooks.event(completed_event(outcome));
        }
    }
}

impl CompactHooks for Held<'_> {
    fn before_compact<'a>(&'a self, info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        self.hooks.before_compact(info)
    }

    fn event(&self, event: Value) {
        if event.get("type").and_then(Value::as_str) == Some("completed") {
            *self.completed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        } else {
            self.hooks.event(event);
        }
    }
}

/// The hooks of a compaction that goes on from a checkpoint: the call was confirmed and
/// announced once already, and its `completed` event is said of the caller's list.
pub(crate) struct Extending<'a> {
    pub hooks: &'a dyn CompactHooks,
}

impl CompactHooks for Extending<'_> {
    fn before_compact<'a>(&'a self, _info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        Box::pin(async { Confirmation::Proceed })
    }

    fn event(&self, event: Value) {
        match event.get("type").and_then(Value::as_str) {
            Some("token_limit_exceeded" | "started" | "completed") => {}
            _ => self.hooks.event(event),
        }
    }
}

/// An outcome on the list "head + checkpoint summary + rest", said of `messages`: indices,
/// the region, the statistics (counted on `messages`, so they add up to its length).
fn said_of_input(
    mut outcome: CompactOutcome,
    messages: &[Value],
    counts: &[usize],
    checkpoint: &Checkpoint,
) -> CompactOutcome {
    let head = checkpoint.head_length;
    let covered = checkpoint.covered_messages;
    // Index in the reduced list → index in `messages` (`None`: the checkpoint's summary).
    let of_input = |index: usize| -> Option<usize> {
        match index.cmp(&head) {
            std::cmp::Ordering::Less => Some(index),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(index - head - 1 + covered),
        }
    };
    // A position that is a boundary (the end of a region) in the reduced list.
    let boundary = |index: usize| -> usize {
        if index <= head {
            index
        } else {
            index - head - 1 + covered
        }
    };
    outcome.pieces = std::mem::take(&mut outcome.pieces)
        .into_iter()
        .map(|piece| match piece {
            Piece::Original(index) => match of_input(index) {
                Some(index) => Piece::Original(index),
                None => Piece::New(checkpoint.message.clone()),
            },
            new => new,
        })
        .collect();
    outcome.piece_sources = outcome
        .piece_sources
        .iter()
        .map(|source| source.and_then(of_input))
        .collect();
    let region = outcome
        .partition
        .map(|p| Partition {
            head_len: boundary(p.head_len),
            tail_start: boundary(p.tail_start),
        })
        .unwrap_or(Partition {
            head_len: head,
            tail_start: covered,
        });
    outcome.partition = Some(region);
    for offloaded in &mut outcome.offloaded {
        offloaded.original_index = boundary(offloaded.original_index);
    }
    for change in &mut outcome.transformations {
        let index = boundary(change.original_index);
        if let Some(rest) = change
            .path
            .strip_prefix(&format!("messages.{}", change.original_index))
        {
            change.path = format!("messages.{index}{rest}");
        }
        change.original_index = index;
    }
    let original: usize = counts.iter().sum();
    outcome.stats.original_token_count = original;
    outcome.stats.compaction_ratio = if original == 0 {
        0.0
    } else {
        outcome.stats.compacted_token_count as f64 / original as f64
    };
    outcome.stats.set_message_counts(
        &vec![1; messages.len()],
        region.head_len..region.tail_start,
        outcome
            .piece_sources
            .iter()
            .flatten()
            .map(|&index| (index, 1)),
    );
    outcome
}

/// Records the checkpoint of a compaction that went through with a summary and an archive:
/// the prefix it covered (hashed on from `hashes`, the list's prefixes hashed so far, when
/// given) and its summary message without a thinking line. Written create-only in the session's location; a failure is a warning.
/// The `completed` event says it (`checkpoint`).
fn record(
    messages: &[Value],
    hashes: Option<PrefixHashes>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    outcome: &mut CompactOutcome,
) {
    if !outcome.compacted || outcome.strategy != Strategy::Summary {
        return;
    }
    let (Some(region), Some(archive)) = (outcome.partition, outcome.archive_path.as_ref()) else {
        return;
    };
    if region.head_len >= region.tail_start || region.tail_start > messages.len() {
        return;
    }
    let message = match outcome.pieces.get(region.head_len) {
        Some(Piece::New(message))
            if added::is_summary_message(message) && !added::is_notice(message) =>
        {
            added::without_thinking_line(message)
        }
        _ => return,
    };
    let format = format_name(options);
    let mut hashes = hashes.unwrap_or_else(|| PrefixHashes::up_to(messages, format, 0));
    hashes.extend_to(messages, region.tail_start);
    let Some(prefix) = hashes.hex(region.tail_start) else {
        return;
    };
    let checkpoint = Checkpoint {
        version: CHECKPOINT_VERSION,
        format: format.to_string(),
        covered_messages: region.tail_start,
        head_length: region.head_len,
        prefix,
        archive_path: archive.display().to_string(),
        message,
        summary: outcome.summary.clone(),
        created_at: crate::archive::rfc3339(time::OffsetDateTime::now_utc(), false),
        session_id: options.session_id.clone(),
        summarizer: summarizer_config(options, summarizer),
    };
    if let Err(e) = store::record_in(
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        &checkpoint,
    ) {
        let message = format!("could not record the checkpoint of this compaction: {e}");
        tracing::warn!("{message}");
        outcome.warnings.push(message);
    }
    outcome.checkpoint = Some(CheckpointReport {
        reused: false,
        extended: false,
        covered_messages: checkpoint.covered_messages,
        archive_path: checkpoint.archive_path.clone(),
        recorded: true,
    });
    outcome.checkpoint_record = Some(checkpoint);
}
