//! Step 5, **fit**: the result must fit (SPEC §4.7). The draft — the new list with a stand-in
//! for the archive paths — is measured with the trigger's own estimate. When it is still at or
//! over the threshold, the largest texts of the kept messages after the summary are shortened
//! ([`crate::plan::offload`]: tool results by default), as far as needed for the estimate to fall
//! below the threshold with room for the next turns: `threshold − tailRetentionTokens` (at most
//! half the threshold of room). Fitting only under the threshold would have the very next turn
//! compact again.
//!
//! What cannot be made to fit is not hidden: the report step compares the final list with the
//! threshold and the input, and says `STILL_OVER_LIMIT` or `NOT_SMALLER`.

use serde_json::Value;

use crate::base::error::CompactError;
use crate::carry::sections;
use crate::carry::todos;
use crate::carry::user_messages::{self, refit_section, UserMessages};
use crate::model::tokens;
use crate::options::CompactOptions;
use crate::pipeline::measure::Estimator;
use crate::pipeline::rehydrate::{self, Gathered};
use crate::pipeline::report::reporter::Reporter;
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::draft::Draft;
use crate::pipeline::shared::outcome::RehydratedFile;
use crate::pipeline::shared::pieces::{draft_tokens, target, ArchiveRefs, Fitting};
use crate::pipeline::shared::session::stand_in_archive_path;
use crate::plan::offload::{self, Site};

/// How many times the cuts are re-planned when the exact count after cutting is not yet low
/// enough (token counts of cut text are not proportional to its length).
const MAX_REFITS: usize = 4;

/// Step 5: the shortening of `draft` for it to fit, then the sections the library adds giving
/// way when that is what fits, then the files gathered after the summary, as many as the result
/// holds ([`rehydrate::attach`]). `Err`: the result would not be smaller than the input
/// (`NOT_SMALLER`).
pub(crate) fn fit(
    call: &Call<'_>,
    report: &Reporter<'_>,
    draft: &mut Draft,
    gathered: Gathered,
) -> Result<(Fitting, Vec<RehydratedFile>), CompactError> {
    let (messages, counts, options) = (call.messages, call.counts, call.options);
    let estimator = &call.measured.estimator;
    let stand_in = stand_in_archive_path(options);
    let fitting = shorten(messages, counts, draft, estimator, &stand_in, options);
    let original_tokens = report.original_tokens();
    let mut fitting = sections_give_way(
        messages,
        counts,
        draft,
        fitting,
        estimator,
        &stand_in,
        options,
        original_tokens,
    );
    if let Some(error) = report.not_smaller(fitting.tokens) {
        return Err(error);
    }
    let rehydrated = rehydrate::attach(
        messages,
        counts,
        draft,
        &mut fitting,
        &gathered,
        estimator,
        &stand_in,
        options,
        original_tokens,
    );
    draft.warnings.extend(gathered.warnings);
    Ok((fitting, rehydrated))
}

/// Decides the shortening of `draft` for it to fit. `stand_in` is a path at least as long as
/// the real archive paths will be.
fn shorten(
    messages: &[Value],
    counts: &[usize],
    draft: &Draft,
    estimator: &Estimator,
    stand_in: &str,
    options: &CompactOptions,
) -> Fitting {
    let refs = ArchiveRefs {
        region: Some(stand_in),
        offload: Some(stand_in),
        thinking: Some(stand_in),
    };
    let mut fitting = Fitting::default();
    fitting.tokens = draft_tokens(messages, counts, draft, &fitting, refs, options);
    let estimate = estimator.after(fitting.tokens);
    let threshold = estimator.threshold();
    if estimate < threshold {
        return fitting;
    }
    // Messages the thinking policy changed are not shortened too: a cut's path indexes the
    // original content blocks, and their originals are archived once already.
    let shortenable: Vec<usize> = draft
        .kept_after(messages.len())
        .into_iter()
        .filter(|i| !draft.stripped.iter().any(|s| s.index == *i))
        .collect();
    let sites: Vec<Site> =
        offload::find_sites(messages, shortenable, options.offload, options.encoding);
    if sites.is_empty() {
        return fitting;
    }
    let target = target(estimator, options);
    let mut reduce = estimator.raw_for(estimate - target);
    let mut last_plan = Vec::new();
    for _ in 0..MAX_REFITS {
        let plan = offload::plan_cuts(&sites, reduce);
        if plan.is_empty() || plan == last_plan {
            break;
        }
        fitting.cuts = offload::cuts_by_message(&sites, &plan);
        fitting.tokens = draft_tokens(messages, counts, draft, &fitting, refs, options);
        let estimate = estimator.after(fitting.tokens);
        if estimate <= target {
            break;
        }
        reduce += estimator.raw_for(estimate - target);
        last_plan = plan;
    }
    fitting
}

/// When the fitted draft is still at or over the threshold, or not smaller than the input
/// (`original_tokens`), the sections the library adds to a summary give way (SPEC §4.12), when
/// that makes it fit: first the recall lines of earlier
/// compactions, then this compaction's (pointers only: the header still names the archive, and
/// the recall tool lists every archive, so nothing is lost and nothing is said); then the user's
/// messages carried verbatim — their section is fitted again into as many fewer tokens as the
/// estimate is over (the most recent kept, the number left out said), down to nothing, with a
/// warning. The draft is fitted again after each step. They are a convenience; the
/// post-condition is a promise. They give way only as far as that reaches something: under the
/// threshold and smaller than the input, or, when even without them the result stays over the
/// threshold, smaller than the input (so the compaction is not refused as NOT_SMALLER). The
/// user's messages keep the task's two ends while the latest failure and then the agent's task
/// list give way, each with a warning; the task's ends go last.
#[allow(clippy::too_many_arguments)]
fn sections_give_way(
    messages: &[Value],
    counts: &[usize],
    draft: &mut Draft,
    fitting: Fitting,
    estimator: &Estimator,
    stand_in: &str,
    options: &CompactOptions,
    original_tokens: usize,
) -> Fitting {
    let mut aim = Aim {
        messages,
        counts,
        estimator,
        stand_in,
        options,
        original_tokens,
        under_threshold: true,
    };
    if draft.sections_text_mut().is_none()
        || (aim.over_threshold(&fitting) == 0 && aim.not_smaller(&fitting) == 0)
    {
        return fitting;
    }
    // What would be reached without them at all: giving them up is worth it only for that.
    let trial = aim.without_sections(draft);
    if aim.not_smaller(&trial) > 0 {
        return fitting;
    }
    // Under the threshold too when that can be had; else only smaller than the input.
    aim.under_threshold = aim.over_threshold(&trial) == 0;
    let mut fitting = fitting;
    if !aim.over(&fitting) {
        return fitting;
    }
    for lines in [sections::RecallLines::Current, sections::RecallLines::None] {
        if !aim.over(&fitting) {
            return fitting;
        }
        draft.recall = lines;
        fitting = aim.shorten(draft);
    }
    let before = draft
        .sections_text_mut()
        .and_then(|text| UserMessages::parse(text));
    // The task (the user's first request) keeps its two ends until the latest failure and the
    // task list have given way too.
    let floor = if before
        .as_ref()
        .is_some_and(|users| users.messages.iter().any(|m| m.task))
    {
        TASK_FLOOR_TOKENS
    } else {
        0
    };
    fitting = aim.user_messages_give_way(draft, fitting, floor);
    fitting = aim.last_give_way(draft, fitting, floor);
    if let Some(before) = before.filter(|before| !before.messages.is_empty()) {
        user_messages_warning(draft, &before, floor);
    }
    fitting
}

/// What the sections give way for (see [`sections_give_way`]): a result smaller than the input,
/// and under the threshold when `under_threshold`.
struct Aim<'a> {
    messages: &'a [Value],
    counts: &'a [usize],
    estimator: &'a Estimator,
    stand_in: &'a str,
    options: &'a CompactOptions,
    original_tokens: usize,
    under_threshold: bool,
}

impl Aim<'_> {
    /// The draft fitted again.
    fn shorten(&self, draft: &Draft) -> Fitting {
        let (messages, counts, options) = (self.messages, self.counts, self.options);
        shorten(
            messages,
            counts,
            draft,
            self.estimator,
            self.stand_in,
            options,
        )
    }

    /// Raw tokens over the threshold.
    fn over_threshold(&self, fitting: &Fitting) -> usize {
        let estimator = self.estimator;
        let estimate = estimator.after(fitting.tokens);
        if estimate >= estimator.threshold() {
            estimator.raw_for(estimate + 1 - estimator.threshold())
        } else {
            0
        }
    }

    /// Raw tokens not fewer than the input's (a result that is not smaller is not returned at
    /// all: NOT_SMALLER).
    fn not_smaller(&self, fitting: &Fitting) -> usize {
        (fitting.tokens + 1).saturating_sub(self.original_tokens)
    }

    /// Raw tokens more than the aim allows.
    fn excess(&self, fitting: &Fitting) -> usize {
        let over = if self.under_threshold {
            self.over_threshold(fitting)
        } else {
            0
        };
        over.max(self.not_smaller(fitting))
    }

    fn over(&self, fitting: &Fitting) -> bool {
        self.excess(fitting) > 0
    }

    /// The draft fitted without any of the sections, the draft left as it was.
    fn without_sections(&self, draft: &mut Draft) -> Fitting {
        let original_text = draft.sections_text_mut().map(|text| text.clone());
        let original_recall = draft.recall;
        let original_failure = draft.latest_failure;
        if let Some(text) = draft.sections_text_mut() {
            if let Some(without) = user_messages::without_section(text) {
                *text = without;
            }
            if let Some(without) = todos::without_section(text) {
                *text = without;
            }
        }
        draft.recall = sections::RecallLines::None;
        draft.latest_failure.max_tokens = 0;
        let trial = self.shorten(draft);
        if let (Some(text), Some(original)) = (draft.sections_text_mut(), original_text) {
            *text = original;
        }
        draft.recall = original_recall;
        draft.latest_failure = original_failure;
        trial
    }

    /// The user's messages fitted again into as many fewer tokens as the result is over, a few
    /// times, down to the task's two ends (`floor`).
    fn user_messages_give_way(
        &self,
        draft: &mut Draft,
        mut fitting: Fitting,
        floor: usize,
    ) -> Fitting {
        const MAX_STEPS: usize = 4;
        for step in 0..MAX_STEPS {
            if !self.over(&fitting) {
                break;
            }
            let Some(text) = draft.sections_text_mut() else {
                break;
            };
            let Some(section) = sections::split(text).user_messages else {
                break;
            };
            let current = tokens::count_text(self.options.encoding, section);
            // The last step leaves nothing of it but the task's two ends.
            let budget = if step + 1 == MAX_STEPS {
                floor
            } else {
                current.saturating_sub(self.excess(&fitting)).max(floor)
            };
            if budget >= current {
                break;
            }
            let Some(refitted) = refit_section(text, budget, self.options.encoding) else {
                break;
            };
            *text = refitted;
            fitting = self.shorten(draft);
        }
        fitting
    }

    /// Last, the latest failure and the task list (the archive holds them too, and the recall
    /// tool reaches them), then the task's two ends, then the line that says how many were left
    /// out: the warning says it then.
    fn last_give_way(&self, draft: &mut Draft, mut fitting: Fitting, floor: usize) -> Fitting {
        if self.over(&fitting) && draft.latest_failure.max_tokens > 0 {
            let original_failure = draft.latest_failure;
            draft.latest_failure.max_tokens = 0;
            let without = self.shorten(draft);
            if without.tokens < fitting.tokens {
                draft.warnings.push(
                    "the latest failed tool call was left out of the summary for the result to fit (under the threshold, smaller than the input)".into(),
                );
                fitting = without;
            } else {
                draft.latest_failure = original_failure;
            }
        }
        if self.over(&fitting) {
            let without = draft
                .sections_text_mut()
                .and_then(|text| todos::without_section(text));
            if let Some(without) = without {
                if let Some(text) = draft.sections_text_mut() {
                    *text = without;
                }
                fitting = self.shorten(draft);
                draft.warnings.push(
                    "the agent's task list was left out of the summary for the result to fit (under the threshold, smaller than the input)".into(),
                );
            }
        }
        if self.over(&fitting) && floor > 0 {
            if let Some(text) = draft.sections_text_mut() {
                if let Some(refitted) = refit_section(text, 0, self.options.encoding) {
                    *text = refitted;
                    fitting = self.shorten(draft);
                }
            }
        }
        if self.over(&fitting) {
            if let Some(text) = draft.sections_text_mut() {
                if let Some(without) = user_messages::without_section(text) {
                    *text = without;
                    fitting = self.shorten(draft);
                }
            }
        }
        fitting
    }
}

/// The warning when the user's messages carried in the summary (`before`) were cut.
fn user_messages_warning(draft: &mut Draft, before: &UserMessages, floor: usize) {
    let after = draft
        .sections_text_mut()
        .and_then(|text| UserMessages::parse(text))
        .unwrap_or_default();
    if after != *before {
        let dropped = before.messages.len().saturating_sub(after.messages.len());
        let task_lost = floor > 0 && !after.messages.iter().any(|m| m.task);
        draft.warnings.push(format!(
            "the user's messages carried in the summary were cut for the result to fit (under the threshold, smaller than the input): {} of {} kept{}{}",
            after.messages.len(),
            before.messages.len(),
            if dropped == 0 { " (the latest shortened)" } else { "" },
            if task_lost { "; the task (the user's first request) is not among them" } else { "" }
        ));
    }
}

/// What the user's messages keep, when the result would not fit otherwise, until the latest
/// failure and the task list have given way: room for the task's beginning and end.
const TASK_FLOOR_TOKENS: usize = 160;
