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
pub(crate) mod call;
pub mod checkpoint;
pub mod compact;
pub(crate) mod draft;
pub mod fit;
pub mod format;
pub mod hooks;
pub mod measure;
pub(crate) mod middle;
pub(crate) mod native;
pub mod offload;
// The options are the layer below (`crate::options`); the steps name them `super::options`.
pub use crate::options;
pub mod outcome;
pub(crate) mod parts;
pub(crate) mod pieces;
pub mod plan;
pub mod precompute;
pub mod record;
pub(crate) mod region;
pub mod rehydrate;
pub mod report;
pub(crate) mod reporter;
pub(crate) mod reuse;
pub(crate) mod rounds;
pub(crate) mod session;
pub mod summarize;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::call::Call;
use self::checkpoint::{Extending, Held, Start};
use self::options::CompactOptions;
use self::outcome::{Aborted, CompactOutcome};
use self::plan::Plan;
use self::report::Compacted;
use self::reporter::Reporter;
use crate::archive::checkpoint::Checkpoint;
use crate::model::tokens;
use crate::summary::summarize::{AttemptObserver, Summarizer};

pub use self::hooks::{BeforeCompactInfo, CompactHooks, Confirmation, NoHooks};
pub use self::rounds::MAX_ROUNDS;

/// [`crate::pipeline::compact::compact`] with the confirmation hook and events.
pub async fn compact_with_hooks(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    hooks: &dyn CompactHooks,
) -> Result<CompactOutcome, Aborted> {
    let counts = counts.unwrap_or_else(|| tokens::count_each(options.encoding, messages));
    let measured = measure::measure(messages, &counts, options);
    let call = Call {
        messages,
        counts: &counts,
        measured: &measured,
        options,
        summarizer,
        cancel,
        observer,
        hooks,
    };
    match run(&call).await {
        Ok(mut outcome) => {
            outcome.measure = Some(measured.measure);
            outcome.trigger = measured.trigger;
            Ok(outcome)
        }
        Err(Aborted) => {
            record::record_aborted(options);
            Err(Aborted)
        }
    }
}

/// One compaction: what stands for the start of the list is looked up once it fires, the
/// steps run, and the checkpoint of what they did is recorded after them.
async fn run(call: &Call<'_>) -> Result<CompactOutcome, Aborted> {
    if call.measured.trigger.is_none() {
        return Ok(Reporter::new(call).skipped(None));
    }
    let start = Start::look_up(call);
    // The `completed` event waits for the checkpoint, so that it is the call's last event and
    // says what checkpoints did.
    let held = Held::new(call.hooks);
    let mut outcome = steps(&call.with_hooks(&held), &start).await?;
    start.close(call, &held, &mut outcome);
    Ok(outcome)
}

/// The steps, top to bottom (see the module docs).
async fn steps(call: &Call<'_>, start: &Start<'_>) -> Result<CompactOutcome, Aborted> {
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
    if let Plan::Reuse(checkpoint) = &plan {
        if checkpoint::reused(call, checkpoint) {
            match extend(call, checkpoint).await? {
                Ok(outcome) => return Ok(outcome),
                Err(note) => report.notes.push(note),
            }
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

/// Compaction that goes on from `checkpoint`: the steps on the list with it in place (confirmed
/// and announced once already: the hooks say neither again), said of the call's list. `Err`:
/// why it did not go through.
async fn extend(
    call: &Call<'_>,
    checkpoint: &Checkpoint,
) -> Result<Result<CompactOutcome, String>, Aborted> {
    let (reduced, reduced_counts) = checkpoint::in_place(call, checkpoint);
    let hooks = Extending { hooks: call.hooks };
    let on_reduced = call.on(&reduced, &reduced_counts, &hooks);
    let outcome = Box::pin(steps(&on_reduced, &Start::none())).await?;
    Ok(checkpoint::extended(call, checkpoint, outcome))
}

#[cfg(test)]
mod tests;
