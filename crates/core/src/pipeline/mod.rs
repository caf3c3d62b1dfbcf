//! The compaction pipeline, one step a module, run top to bottom by [`compact_with_hooks`].
//! Each step imports only the steps before it and the shared types below them; `steps` (in
//! this file) is the list:
//!
//! ```text
//!   1. measure     the trigger's estimate (SPEC §4.2) and what fires: tokens, `maxMessages`,
//!        |         `maxToolOutputBytes`, `force`; `token_limit_exceeded` at the threshold
//!   2. plan        what the strategy would do, without side effects — or the region a recorded
//!        |         checkpoint or a summary prepared in the background stands for — then the
//!        |         confirmation hook (which may decline) and the `started` event
//!   3. summarize   what replaces the region: a checkpoint's summary message (going on from it
//!        |         while still over the threshold), a background summary, Anthropic's
//!        |         on-demand compaction (native), or our own in rounds (rounds → region →
//!        |         middle), or a notice; then the thinking policy for the kept turns
//!   4. rehydrate   the files worked on, gathered to show after the summary
//!        |
//!   5. fit         the result must fit: oversized kept text shortened (offload), the library's
//!        |         sections giving way, then as many of the gathered files as fit
//!   6. archive     the replaced region and the originals of the kept messages the compaction
//!        |         changed: one archive, one sequence number
//!   7. assemble    the new list, naming the archives
//!        |
//!   8. report      the post-condition (below the threshold, smaller than the input), the
//!                  statistics, the records (metadata, audit), memory extraction, `completed`
//!
//!   shared, below the steps:
//!     draft, pieces     the region and what replaces it; the new list as pieces, the fit's cuts
//!     reporter          outcomes of a step that stops the compaction, `failed` / `completed`
//!     call, hooks       the call as the steps see it; the caller's confirmation and events
//!     session, record   the session's own summaries and stand-in paths; the records written
//!     background        a summary prepared ahead of the threshold, and whether it still stands
//!     options, outcome  what a compaction is asked, and what it did
//! ```
//!
//! Around the steps, [`checkpoint`] (SPEC §4.11): once a compaction fires, what stands for the
//! start of the list is looked up — a background summary ([`precompute`] makes one) whose
//! messages are unchanged, or a checkpoint an earlier compaction recorded (`reuse` checks
//! it) — for the plan and summarize steps to use; after the report, a compaction that
//! summarized records its checkpoint. [`mod@compact`] is the entry point, [`mod@format`] maps an
//! outcome back to a list in another format, [`offload`] shortens tool results on its own.

pub mod archive;
pub mod assemble;
pub mod background;
pub mod fit;
pub mod hooks;
pub mod measure;
pub mod options;
pub mod plan;
pub mod rehydrate;
pub mod report;
pub mod shared;
pub mod summarize;

use std::sync::Arc;

use self::background::Precomputed;
use self::plan::Plan;
use self::report::reporter::Reporter;
use self::report::Compacted;
use self::shared::call::Call;
use crate::archive::checkpoint::Checkpoint;
use crate::plan::partition::Partition;
use crate::summary::summarize::BoxFuture;

// The names callers use for the parts of a compaction.
pub use self::assemble::{assemble_messages, summary_message, summary_model_window};
pub use self::hooks::{BeforeCompactInfo, CompactHooks, Confirmation, NoHooks};
pub use self::options::{token_budget, CompactOptions, PromptStyle};
pub use self::shared::outcome::{Aborted, CompactOutcome, CompactStats, Piece};
pub use self::summarize::middle::{cap_chars, summarize_middle, Summary};
pub use self::summarize::region::{summarize_region, RegionSummary};
pub use self::summarize::rounds::MAX_ROUNDS;

/// What earlier work stands for the start of the list, looked up before the steps run (by
/// the layer around the steps, `resume`, SPEC §4.11): a summary prepared in the background whose messages are
/// unchanged, or a checkpoint an earlier compaction recorded, and what goes on from that
/// checkpoint.
pub(crate) struct Start<'a> {
    /// The summary prepared in the background, still standing for the start.
    pub precomputed: Option<&'a Precomputed>,
    /// The checkpoint that stands for the start.
    pub checkpoint: Option<Arc<Checkpoint>>,
    /// What step 3 does with that checkpoint.
    pub resume: Option<&'a dyn Resume>,
}

impl Start<'_> {
    /// Nothing stands for the start.
    pub fn none() -> Self {
        Start {
            precomputed: None,
            checkpoint: None,
            resume: None,
        }
    }

    /// The region the summary prepared in the background covers.
    pub fn background(&self) -> Option<Partition> {
        self.precomputed.map(|pre| Partition {
            head_len: pre.head_length,
            tail_start: pre.covered_messages,
        })
    }
}

/// Step 3 with a reused checkpoint, as the layer around the steps does it (`resume`, the layer above):
/// it says the checkpoint is reused and, when the list with it in place is still over the
/// threshold, goes on from it. `None`: the list with it in place is under the threshold, and
/// the steps go on with its summary message; `Some(Ok)`: the compaction that went on from it;
/// `Some(Err)`: why it did not go through (a warning of the steps that go on).
pub(crate) trait Resume: Sync {
    fn reuse<'a>(
        &'a self,
        call: &'a Call<'a>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<Option<Result<CompactOutcome, String>>, Aborted>>;
}

/// The steps, top to bottom (see the module docs).
pub(crate) async fn steps(call: &Call<'_>, start: &Start<'_>) -> Result<CompactOutcome, Aborted> {
    let mut report = Reporter::new(call);
    // 1. measure: what fires
    let Some(trigger) = measure::announce(call.measured, call.hooks) else {
        return Ok(report.skipped(None));
    };
    // 2. plan, and the caller's confirmation
    let checkpoint = start.checkpoint.clone();
    let confirmed = plan::confirmed(call, &report, trigger, checkpoint, start.background());
    let (plan, planned) = match confirmed.await? {
        Ok(confirmed) => confirmed,
        Err(outcome) => return Ok(outcome),
    };
    // 3. summarize — or reuse a checkpoint, going on from it while still over the threshold
    if let (Plan::Reuse(checkpoint), Some(resume)) = (&plan, start.resume) {
        match resume.reuse(call, checkpoint).await? {
            Some(Ok(outcome)) => return Ok(outcome),
            Some(Err(note)) => report.notes.push(note),
            None => {}
        }
    }
    let drafted = summarize::summarize(call, plan, start.precomputed, &planned, &report);
    let (mut draft, summarizer) = match drafted.await? {
        Ok(drafted) => drafted,
        Err(outcome) => return Ok(outcome),
    };
    // 4. rehydrate: the files worked on, gathered now, placed by the fit step
    let gathered = rehydrate::gather_for(call, &draft).await?;
    // 5. fit
    let (fitting, rehydrated) = match fit::fit(call, &report, &mut draft, gathered) {
        Ok(fitted) => fitted,
        Err(error) => return Ok(report.failed(error, &planned)),
    };
    // 6. archive
    let archived = match archive::archive(call.messages, &draft, &fitting, call.options) {
        Ok(archived) => archived,
        Err(error) => return Ok(report.failed(error, &planned)),
    };
    // 7. assemble
    let encoding = call.options.encoding;
    let assembled = assemble::assemble(call.messages, &draft, &fitting, &archived, encoding);
    // 8. report
    Ok(report.compacted(Compacted {
        draft,
        fitting,
        assembled,
        archived,
        planned,
        summarizer,
        rehydrated,
    }))
}

#[cfg(test)]
mod tests;
