//! One budget for everything the library writes into a summary message (`summaryBudgetTokens`):
//! the summary's own text (the model's, or the extractive summarizer's), the ledger, the user's
//! words, the task list, the latest failure and the recall lines. Each part has a documented
//! share of it; a per-section option (`userMessagesMaxTokens`, `planMaxTokens`,
//! `latestFailureMaxTokens`) is a cap inside its share, never a way past it. The ledger also
//! takes what the task list and the user's messages leave of their shares, and the text of the
//! summary takes what all the sections leave, and at least its own share.
//!
//! Without a bound, a long session's summary grows with every compaction (each one carries the
//! last one forward, and the ledger names every file ever touched) until it no longer fits the
//! window it was meant to save.

use crate::model::tokens::{self, Encoding};

/// The default budget: this share of the window…
pub const DEFAULT_SHARE_PERCENT: usize = 10;
/// …and at least this many tokens, so a small window still gets a useful summary…
pub const DEFAULT_FLOOR_TOKENS: usize = 4_000;
/// …but never more than this share of the window.
pub const MAX_SHARE_PERCENT: usize = 15;

/// Each part's share of the budget, in percent (they add up to 100).
pub const BODY_PERCENT: usize = 15;
pub const LEDGER_PERCENT: usize = 35;
pub const USER_MESSAGES_PERCENT: usize = 25;
pub const PLAN_PERCENT: usize = 10;
pub const LATEST_FAILURE_PERCENT: usize = 5;
pub const RECALL_PERCENT: usize = 10;
/// The recall section with this compaction's line: its header, the line that says how to read
/// it, one `Recall:` line and the count of earlier ones left out.
pub const RECALL_FLOOR_TOKENS: usize = 80;

/// The summary budget, in tokens, and the share of each part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryBudget {
    pub total: usize,
}

impl SummaryBudget {
    /// The default budget for a window of `window` tokens: 10 % of it, at least 4 000 tokens,
    /// at most 15 % of it.
    pub fn default_for(window: usize) -> SummaryBudget {
        let share = window * DEFAULT_SHARE_PERCENT / 100;
        let ceiling = window * MAX_SHARE_PERCENT / 100;
        SummaryBudget {
            total: share.max(DEFAULT_FLOOR_TOKENS.min(ceiling)),
        }
    }

    fn percent(&self, p: usize) -> usize {
        self.total * p / 100
    }

    /// The least the summary's own text is given (it takes what the sections leave too).
    pub fn body(&self) -> usize {
        self.percent(BODY_PERCENT)
    }
    pub fn ledger(&self) -> usize {
        self.percent(LEDGER_PERCENT)
    }
    pub fn user_messages(&self) -> usize {
        self.percent(USER_MESSAGES_PERCENT)
    }
    pub fn plan(&self) -> usize {
        self.percent(PLAN_PERCENT)
    }
    pub fn latest_failure(&self) -> usize {
        self.percent(LATEST_FAILURE_PERCENT)
    }
    /// The recall lines' share, and at least room for this compaction's line (the pointer
    /// the recall tool needs most), up to a quarter of a very small budget; what that takes
    /// beyond the share comes out of the ledger's room.
    pub fn recall(&self) -> usize {
        self.percent(RECALL_PERCENT)
            .max(RECALL_FLOOR_TOKENS.min(self.total / 4))
    }

    /// What the ledger may take: its share, and what the task list and the user's messages
    /// (`plan_tokens`, `user_tokens`, as written) leave of theirs. The ledger is the part of a
    /// summary nothing else can give back; the others are bounded by their own options too.
    pub fn ledger_room(&self, plan_tokens: usize, user_tokens: usize) -> usize {
        let recall_beyond_share = self.recall() - self.percent(RECALL_PERCENT);
        (self.ledger()
            + self.plan().saturating_sub(plan_tokens)
            + self.user_messages().saturating_sub(user_tokens))
        .saturating_sub(recall_beyond_share)
    }

    /// What the summary's text may take beside `sections` (the ledger, task list and user's
    /// messages as appended): the budget less those sections and the shares of the parts
    /// written after them (the latest failure, the recall lines), and at least its own share.
    pub fn body_room(&self, sections: &str, encoding: Encoding) -> usize {
        let used = tokens::count_text(encoding, sections) + self.latest_failure() + self.recall();
        self.total.saturating_sub(used).max(self.body())
    }
}

/// The marker a summary text cut to its budget ends with.
pub const CUT_MARKER: &str = "[summary shortened to fit its budget]";

/// `text` within `max_tokens`. A text of `## ` sections of `- ` items (the structured
/// summary, the model's or the extractive summarizer's) loses its oldest items first, one at a
/// time from the section that holds the most, so every section keeps its latest; a section left
/// with nothing is left out. Whatever still does not fit is cut at a line end, with a marker.
pub fn fit_text(text: &str, max_tokens: usize, encoding: Encoding) -> String {
    if tokens::count_text(encoding, text) <= max_tokens {
        return text.to_string();
    }
    let mut sections = parse_sections(text);
    if sections.iter().any(|s| !s.items.is_empty()) {
        // Drop items by size until the estimate fits; then measure exactly and go on.
        loop {
            let rendered = render_sections(&sections);
            let count = tokens::count_text(encoding, &rendered);
            if count <= max_tokens {
                return rendered;
            }
            let over = count - max_tokens;
            let mut freed = 0;
            while freed < over {
                // The goal (what the user asked for) gives way last: the other sections lose
                // their items first.
                let others = sections.iter().any(|s| !s.is_goal() && !s.items.is_empty());
                if !others && freed > 0 {
                    // Measured exactly before the goal loses anything.
                    break;
                }
                // Each section keeps its latest item as long as another has two or more.
                let size = |s: &Section| s.items.iter().map(String::len).sum::<usize>();
                let many = sections
                    .iter()
                    .any(|s| s.items.len() > 1 && !(others && s.is_goal()));
                let Some(largest) = sections
                    .iter_mut()
                    .filter(|s| !(others && s.is_goal()))
                    .filter(|s| s.items.len() > usize::from(many))
                    .max_by_key(|s| size(s))
                else {
                    break;
                };
                // The goal's first item is the task itself: there the later ones go first.
                let at = if largest.is_goal() {
                    largest.items.len() - 1
                } else {
                    0
                };
                let item = largest.items.remove(at);
                freed += item.len() / 4 + 1;
            }
            if sections.iter().all(|s| s.items.is_empty()) {
                break;
            }
        }
        return cut_lines(&render_sections(&sections), max_tokens, encoding);
    }
    cut_lines(text, max_tokens, encoding)
}

/// A section of a structured text: its header line (empty for the lines before the first
/// header), its lines that are not items, its items (without their `- `).
struct Section {
    header: String,
    lines: Vec<String>,
    items: Vec<String>,
}

impl Section {
    /// The structured summary's `## Goal` (any case and spacing).
    fn is_goal(&self) -> bool {
        self.header
            .trim_start_matches('#')
            .trim()
            .eq_ignore_ascii_case("goal")
    }
}

fn parse_sections(text: &str) -> Vec<Section> {
    let mut sections = vec![Section {
        header: String::new(),
        lines: Vec::new(),
        items: Vec::new(),
    }];
    for line in text.lines() {
        if line.starts_with("## ") {
            sections.push(Section {
                header: line.to_string(),
                lines: Vec::new(),
                items: Vec::new(),
            });
            continue;
        }
        let current = sections.last_mut().expect("one section at least");
        if let Some(item) = line.strip_prefix("- ") {
            current.items.push(item.to_string());
        } else if !line.trim().is_empty() {
            current.lines.push(line.to_string());
        }
    }
    sections
}

fn render_sections(sections: &[Section]) -> String {
    let mut out = String::new();
    for section in sections {
        if section.items.is_empty() && section.lines.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        let mut lines: Vec<String> = Vec::new();
        if !section.header.is_empty() {
            lines.push(section.header.clone());
        }
        lines.extend(section.lines.iter().cloned());
        lines.extend(section.items.iter().map(|item| format!("- {item}")));
        out.push_str(&lines.join("\n"));
    }
    out
}

/// `text` cut at a line end (or a character, for one long line) to fit `max_tokens` with the
/// marker; empty when not even the marker fits.
fn cut_lines(text: &str, max_tokens: usize, encoding: Encoding) -> String {
    if tokens::count_text(encoding, text) <= max_tokens {
        return text.to_string();
    }
    let marker_tokens = tokens::count_text(encoding, CUT_MARKER) + 1;
    if max_tokens <= marker_tokens {
        return String::new();
    }
    let room = max_tokens - marker_tokens;
    // Binary search on characters: the longest prefix that fits.
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let end = chars.get(mid).map_or(text.len(), |(i, _)| *i);
        if tokens::count_text(encoding, &text[..end]) <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let end = chars.get(lo).map_or(text.len(), |(i, _)| *i);
    let prefix = &text[..end];
    let prefix = match prefix.rfind('\n') {
        Some(at) if at >= prefix.len() / 2 => &prefix[..at],
        _ => prefix,
    };
    let prefix = prefix.trim_end();
    if prefix.is_empty() {
        return String::new();
    }
    format!("{prefix}\n{CUT_MARKER}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_a_tenth_of_the_window_with_a_floor_and_a_ceiling() {
        assert_eq!(SummaryBudget::default_for(200_000).total, 20_000);
        assert_eq!(SummaryBudget::default_for(1_000_000).total, 100_000);
        // The floor…
        assert_eq!(SummaryBudget::default_for(30_000).total, 4_000);
        // …never past 15 % of the window.
        assert_eq!(SummaryBudget::default_for(20_000).total, 3_000);
        assert_eq!(SummaryBudget::default_for(8_000).total, 1_200);
        let shares = [
            BODY_PERCENT,
            LEDGER_PERCENT,
            USER_MESSAGES_PERCENT,
            PLAN_PERCENT,
            LATEST_FAILURE_PERCENT,
            RECALL_PERCENT,
        ];
        assert_eq!(shares.iter().sum::<usize>(), 100);
        // A small budget keeps room for this compaction's recall line, out of the ledger's.
        let small = SummaryBudget { total: 500 };
        assert_eq!(small.recall(), RECALL_FLOOR_TOKENS);
        assert_eq!(small.ledger_room(50, 125), 175 - (RECALL_FLOOR_TOKENS - 50));
        assert_eq!(SummaryBudget { total: 20 }.recall(), 5);
    }

    #[test]
    fn the_goal_gives_way_last() {
        let enc = Encoding::O200kBase;
        let long = "word ".repeat(30);
        let text = format!(
            "## Goal\n- First request: 0 {long}\n- Latest request: 14 {long}\n\n## Tool calls\n- read_file: 14 call(s)\n\n## Current state\n- Last assistant message: step 16\n"
        );
        // Room for the goal's two requests and little else: the other sections go first.
        let fitted = fit_text(&text, 85, enc);
        assert!(tokens::count_text(enc, &fitted) <= 85, "{fitted}");
        assert!(fitted.contains("First request: 0 word"), "{fitted}");
        assert!(fitted.contains("Latest request: 14 word"), "{fitted}");
        assert!(!fitted.contains("## Tool calls"), "{fitted}");
        // Less room: the goal keeps its first item, the task.
        let fitted = fit_text(&text, 45, enc);
        assert!(tokens::count_text(enc, &fitted) <= 45, "{fitted}");
        assert!(fitted.starts_with("## Goal"), "{fitted}");
        assert!(fitted.contains("First request: 0 word"), "{fitted}");
        assert!(!fitted.contains("Latest request"), "{fitted}");
    }

    #[test]
    fn a_structured_text_loses_its_oldest_items_first_and_keeps_each_sections_latest() {
        let enc = Encoding::O200kBase;
        let mut text =
            String::from("## Goal\n- First request: port the parser\n\n## Key decisions\n");
        for i in 0..200 {
            text.push_str(&format!(
                "- decision number {i} about the lexer and its tokens\n"
            ));
        }
        text.push_str("\n## Errors and fixes\n- the last error\n");
        let fitted = fit_text(&text, 120, enc);
        assert!(tokens::count_text(enc, &fitted) <= 120, "{fitted}");
        assert!(fitted.contains("decision number 199"), "{fitted}");
        assert!(!fitted.contains("decision number 0 "), "{fitted}");
        assert!(fitted.contains("First request: port the parser"));
        assert!(fitted.contains("- the last error"));
        // Plain text is cut at a line end, with the marker.
        let plain = "word ".repeat(2_000);
        let cut = fit_text(&plain, 50, enc);
        assert!(tokens::count_text(enc, &cut) <= 50);
        assert!(cut.ends_with(CUT_MARKER));
        assert_eq!(fit_text("short", 50, enc), "short");
        assert_eq!(fit_text(&plain, 3, enc), "");
    }
}
