//! **Reusing earlier work across calls** (SPEC §4.11): what runs around the pipeline's steps,
//! so that a compaction is never paid for twice.
//!
//! [`compact`] (and [`compact_with_hooks`]) is the entry point of a compaction. Once it fires,
//! what stands for the start of the list is looked up ([`checkpoint`]) — a summary prepared in
//! the background ([`precompute`] makes one) whose messages are unchanged, or a checkpoint an
//! earlier compaction recorded (checked before reuse, `reuse`) — then the steps run
//! ([`crate::pipeline`]); a reused checkpoint is gone on from while the list with it in place is
//! still over the threshold; after the report, a compaction that summarized records its
//! checkpoint.

pub mod checkpoint;
pub mod precompute;
pub(crate) mod reuse;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::checkpoint::{Extending, Held, Start};
use crate::archive::checkpoint::Checkpoint;
use crate::model::tokens;
use crate::pipeline::report::record;
use crate::pipeline::report::reporter::Reporter;
use crate::pipeline::shared::call::Call;
use crate::pipeline::{
    self, measure, Aborted, CompactHooks, CompactOptions, CompactOutcome, NoHooks, Resume,
};
use crate::summary::summarize::{AttemptObserver, BoxFuture, Summarizer};

/// Compacts `messages` (already validated). `counts` are their token counts when the caller
/// has them (the `Compactor` cache), otherwise they are computed.
///
/// Every attempt over the threshold is recorded in the session's audit log, and a compaction
/// also leaves its metadata and summary beside the archive (see [`crate::archive`]); below the
/// threshold nothing is written. Failures to write these records are warnings.
///
/// [`compact_with_hooks`] is the same with the confirmation hook and events.
pub async fn compact(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<CompactOutcome, Aborted> {
    compact_with_hooks(
        messages, counts, options, summarizer, cancel, observer, &NoHooks,
    )
    .await
}

/// [`compact`] with the confirmation hook and events.
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
    let steps_start = start.for_steps(&GoOn);
    let mut outcome = pipeline::steps(&call.with_hooks(&held), &steps_start).await?;
    start.close(call, &held, &mut outcome);
    Ok(outcome)
}

/// Step 3 with a reused checkpoint (see [`Resume`]).
struct GoOn;

impl Resume for GoOn {
    fn reuse<'a>(
        &'a self,
        call: &'a Call<'a>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<Option<Result<CompactOutcome, String>>, Aborted>> {
        Box::pin(async move {
            if !checkpoint::reused(call, checkpoint) {
                return Ok(None);
            }
            extend(call, checkpoint).await.map(Some)
        })
    }
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
    let outcome = pipeline::steps(&on_reduced, &pipeline::Start::none()).await?;
    Ok(checkpoint::extended(call, checkpoint, outcome))
}
