//! The caller's hooks, shared by the steps: the confirmation asked after the plan, and the
//! events each step emits.

use serde::Serialize;
use serde_json::Value;

use crate::model::trigger::TriggerKind;
use crate::plan::strategy::Strategy;
use crate::summary::summarize::BoxFuture;

/// What the confirmation hook sees before anything is written (`onBeforeCompact(info)`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeCompactInfo {
    /// The trigger's estimate and the threshold.
    pub tokens: usize,
    pub threshold: usize,
    pub message_count: usize,
    /// Messages that would be summarized, removed or changed.
    pub middle_count: usize,
    /// Where the part that changes begins, and the index of the first message kept after it
    /// (a selective compaction may keep some messages in between).
    pub head_length: usize,
    pub tail_start: usize,
    pub trigger: TriggerKind,
    pub strategy: Strategy,
    /// A selective compaction that will fall back to a full summary.
    pub fallback: bool,
}

/// The answer of the confirmation hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    Proceed,
    /// Do not compact; the reason goes into the result's error (`DECLINED`).
    Decline(String),
}

impl Confirmation {
    /// The caller's answer to `onBeforeCompact` (true: go on; false: decline; an error: its
    /// message), as a confirmation. A confirmation that failed is not a confirmation.
    pub fn from_answer(answer: Result<bool, String>) -> Confirmation {
        match answer {
            Ok(true) => Confirmation::Proceed,
            Ok(false) => Confirmation::Decline("onBeforeCompact declined the compaction".into()),
            Err(reason) => Confirmation::Decline(format!("onBeforeCompact failed: {reason}")),
        }
    }
}

/// The caller's hooks: confirmation and events. The napi binding implements it over the JS
/// callbacks `onBeforeCompact` and `onEvent`; the core never sees napi types.
pub trait CompactHooks: Send + Sync {
    /// Asked once per compaction, after planning and before any summary call or write.
    fn before_compact<'a>(&'a self, _info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        Box::pin(async { Confirmation::Proceed })
    }
    /// An event: `token_limit_exceeded`, `started`, `completed`, `failed` (`retry` events go
    /// through the [`crate::summary::summarize::AttemptObserver`]).
    fn event(&self, _event: Value) {}
}

/// No hooks.
pub struct NoHooks;
impl CompactHooks for NoHooks {}
