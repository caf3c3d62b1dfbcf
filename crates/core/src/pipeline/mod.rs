//! **One compaction, as its steps.** `steps` (in this file) runs them top to bottom; the listing
//! of this folder is the list: a step of one file is a module (`measure.rs`), a step of several
//! is a folder (`summarize/`, `report/`). Each step imports the steps before it, the shared
//! plumbing (`shared/`) and the report step's `Reporter`, through which a step that stops the
//! compaction says so.
//!
//! ```text
//!   1. measure      the trigger's estimate (SPEC §4.2) and what fires: tokens, `maxMessages`,
//!        |          `maxToolOutputBytes`, `force`; `token_limit_exceeded` at the threshold
//!   2. plan         what the strategy would do, without side effects — or the region a recorded
//!        |          checkpoint or a summary prepared in the background stands for — then the
//!        |          confirmation hook (which may decline) and the `started` event
//!   3. summarize/   what replaces the region: a checkpoint's summary message (going on from it
//!        |          while still over the threshold), a background summary, Anthropic's
//!        |          on-demand compaction (native), or our own in rounds (rounds, asking
//!        |          `summary::region`), or a notice; then the thinking policy for the kept turns
//!   4. rehydrate    the files worked on, gathered to show after the summary
//!        |
//!   5. fit          the result must fit: oversized kept text shortened (offload), the library's
//!        |          sections giving way, then as many of the gathered files as fit
//!   6. archive      the replaced region and the originals of the kept messages the compaction
//!        |          changed: one archive, one sequence number
//!   7. assemble     the new list, naming the archives
//!        |
//!   8. report/      the post-condition (below the threshold, smaller than the input), the
//!                   statistics, the records (metadata, audit: `record`), memory extraction,
//!                   `completed`; `reporter`: the outcome of a step that stops the compaction
//!
//!   beside the steps:
//!     shared/       the call as the steps see it, the draft (the region and what replaces it),
//!                   the new list as pieces, the session's own summaries, the outcome
//!     hooks         the caller's confirmation and events
//!     background    a summary prepared ahead of the threshold, as the caller hands it back
//!     options       what a compaction is asked
//! ```
//!
//! Around the steps (a layer above, `resume`): the entry point `compact`, which looks up what
//! earlier work stands for the start of the list (a background summary, a checkpoint: the
//! `Start` the steps receive), goes on from a reused checkpoint (the `Resume` seam of step
//! 3), and records the checkpoint after the report.

pub mod archive;
pub mod assemble;
pub mod background;
pub mod fit;
pub mod hooks;
pub mod measure;
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
pub use self::shared::outcome::{Aborted, CompactOutcome, CompactStats, Piece};
pub use self::summarize::rounds::MAX_ROUNDS;
pub use self::summarize::{cap_chars, summarize_middle, summarize_region, RegionSummary, Summary};
pub use crate::options::{token_budget, CompactOptions, PromptStyle};

/// What earlier work stands for the start of the list, looked up before the steps run (by the
/// layer around the steps, `resume`, SPEC §4.11): a summary prepared in the background whose
/// messages are unchanged, or a checkpoint an earlier compaction recorded, and what goes on
/// from that checkpoint.
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

/// Step 3 with a reused checkpoint, as the layer around the steps (`resume`) does it: it says the checkpoint is reused and, when the list with it in place is still over the
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
