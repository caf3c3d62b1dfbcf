//! The sections appended beside a summary, whoever writes its text (SPEC §4.5, §4.12): which
//! ones, in which order, within which budgets, and what the summary budget left out of them.
//! The budgets come as plain values ([`SectionBudgets`]), read from the compaction's options.

use serde_json::Value;

use crate::carry::budget::SummaryBudget;
use crate::carry::ledger::Ledger;
use crate::carry::todos;
use crate::carry::user_messages::UserMessages;
use crate::model::added::{self, OwnSummaries};
use crate::model::encoding::Encoding;

/// What the sections beside a summary are written within: the compaction's options, as plain
/// values.
pub struct SectionBudgets<'a> {
    pub encoding: Encoding,
    /// The budget of everything the library writes into a summary message.
    pub summary: SummaryBudget,
    /// The tools whose calls hold the agent's task list (`planTools`).
    pub plan_tools: &'a [String],
    /// `planMaxTokens`, as asked.
    pub plan_max_tokens: usize,
    /// The task list's budget: `planMaxTokens` within its share of the summary budget.
    pub plan: usize,
    /// The user's messages' budget (0: none are carried).
    pub user_messages: usize,
    /// `latestFailureMaxTokens`, as asked.
    pub latest_failure_max_tokens: usize,
}

/// The body of the last summary among `middle` (an earlier compaction's, UC-002), whose
/// sections are carried forward: one the library recorded (`own`), never a message that only
/// starts like one. Notices (strategies without a summary) hold none.
pub fn earlier_body<'a>(middle: &'a [Value], own: &OwnSummaries) -> Option<&'a str> {
    own.last_summary_in(middle)
        .and_then(|i| added::summary_body(&middle[i]))
}

/// The sections the library appends to a summary of `middle`, whoever writes its text (SPEC
/// §4.5, §4.12): the ledger of its tool calls, the agent's latest task list and the user's own
/// messages (the task first) within their budgets, each carried forward after those of
/// `earlier` (the body of the summary being updated). The latest failure follows them when the
/// archive is named ([`crate::carry::latest_error`]).
pub fn appended_sections(
    earlier: Option<&str>,
    middle: &[Value],
    budgets: &SectionBudgets,
    own: &OwnSummaries,
) -> String {
    let encoding = budgets.encoding;
    let plan = todos::section(earlier, middle, budgets.plan_tools, budgets.plan, encoding);
    let mut users = String::new();
    let budget = budgets.user_messages;
    if budget > 0 {
        let carried = match (earlier, earlier.and_then(UserMessages::parse)) {
            (_, Some(carried)) => UserMessages::extract(middle, own).merged_after(&carried),
            // An earlier summary without the section carried none: no task either.
            (Some(_), None) => UserMessages::extract(middle, own),
            (None, None) => UserMessages::extract_session(middle, own),
        };
        let carried = carried.fit(budget, encoding);
        if !carried.is_empty() {
            users = carried.render(budget);
        }
    }
    // The ledger's room: its share, and what the task list and the user's messages left.
    let count = |text: &str| crate::model::tokens::count_text(encoding, text);
    let room = budgets.summary.ledger_room(count(&plan), count(&users));
    let ledger = Ledger::of_region(middle, earlier).render_within(room, encoding);
    let parts: Vec<String> = [ledger, plan, users]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    parts.join("\n\n")
}

/// What the summary budget left out of a summary of `middle` whose sections are `text`: the
/// task list and the latest failure, when their own options would have held them but their
/// shares of `summaryBudgetTokens` did not (`latest_failure_tokens`: the share the draft
/// writes the latest failure with). Said once, as warnings, like the sections that give way
/// for the result to fit.
pub fn budget_losses(
    text: &str,
    middle: &[Value],
    latest_failure_tokens: usize,
    budgets: &SectionBudgets,
    own: &OwnSummaries,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let share = |tokens: usize| {
        format!("it does not fit its share of the summary budget ({tokens} tokens; raise summaryBudgetTokens to keep it)")
    };
    let earlier = earlier_body(middle, own);
    if crate::carry::sections::split(text).plan.is_none()
        && budgets.plan_max_tokens > 0
        && !todos::section(
            earlier,
            middle,
            budgets.plan_tools,
            budgets.plan_max_tokens,
            budgets.encoding,
        )
        .is_empty()
    {
        warnings.push(format!(
            "the agent's task list was left out of the summary: {}",
            share(budgets.plan)
        ));
    }
    let failure =
        |tokens| crate::carry::latest_error::section(middle, None, tokens, budgets.encoding, own);
    if latest_failure_tokens < budgets.latest_failure_max_tokens
        && failure(latest_failure_tokens).is_empty()
        && !failure(budgets.latest_failure_max_tokens).is_empty()
    {
        warnings.push(format!(
            "the latest failed tool call was left out of the summary: {}",
            share(latest_failure_tokens)
        ));
    }
    warnings
}

/// `sections` after the model's text of a summary body, the text fitted first to what the
/// summary budget leaves it beside them ([`crate::carry::budget`]).
pub fn append(body: &mut String, sections: &str, budgets: &SectionBudgets) {
    let room = budgets.summary.body_room(sections, budgets.encoding);
    *body = crate::carry::budget::fit_text(body, room, budgets.encoding);
    if sections.is_empty() {
        return;
    }
    if !body.is_empty() {
        body.push_str("\n\n");
    }
    body.push_str(sections);
}
