//! One compaction call as the steps see it: the list, its token counts and measure, the
//! options, the summarizer, and the caller's cancellation, observer and hooks. Shared by the
//! steps, so each takes the call rather than eight arguments.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::options::CompactOptions;
use crate::pipeline::hooks::CompactHooks;
use crate::pipeline::measure::Measured;
use crate::summary::summarize::{AttemptObserver, Summarizer};

#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub messages: &'a [Value],
    pub counts: &'a [usize],
    pub measured: &'a Measured,
    pub options: &'a CompactOptions,
    pub summarizer: &'a dyn Summarizer,
    pub cancel: &'a CancellationToken,
    pub observer: &'a dyn AttemptObserver,
    pub hooks: &'a dyn CompactHooks,
}

impl<'a> Call<'a> {
    /// The same call with other hooks.
    pub fn with_hooks<'b>(&self, hooks: &'b dyn CompactHooks) -> Call<'b>
    where
        'a: 'b,
    {
        Call { hooks, ..*self }
    }

    /// The same call on another list derived from this one (the list with a checkpoint in
    /// place), with other hooks. The measure stays the input's: the estimate of a list derived
    /// from it (`Estimator::after`) is the input's minus what went away.
    pub fn on<'b>(
        &self,
        messages: &'b [Value],
        counts: &'b [usize],
        hooks: &'b dyn CompactHooks,
    ) -> Call<'b>
    where
        'a: 'b,
    {
        Call {
            messages,
            counts,
            hooks,
            ..*self
        }
    }
}
