//! Context offload (PRD UC-004, SPEC §4.7): oversized text of kept messages is shortened in
//! place — its head and end kept, a marker in between saying how many tokens were elided and
//! where the original is — and the original message goes into an archive, so
//! `restoreMessages` gives it back exactly.
//!
//! The compaction pipeline's `fit` step uses this when the kept tail alone keeps the result
//! over the threshold (one tool output of 200K tokens is a real case); `offloadToolResults`
//! offers it on its own for offload pipelines.
//!
//! What may be shortened is a [`Scope`]: tool results only (the default: a tool's output can be
//! produced again, and the agent only needs to know what it showed), or every message's text
//! (user and assistant text too, opt-in: it is the user's words). Tool-call inputs, images,
//! system messages and summaries are never shortened.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::model::added;
use crate::model::message::{block_type, role_of, Role};
use crate::model::tokens::{self, Encoding};

/// What offload may shorten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Nothing: a result that does not fit says so.
    Off,
    /// The text of tool results (Anthropic `tool_result` blocks, `role: 'tool'` messages).
    #[default]
    ToolResults,
    /// Tool results and the text of user and assistant messages.
    All,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Off => "off",
            Scope::ToolResults => "tool-results",
            Scope::All => "all",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        match name {
            "off" => Some(Scope::Off),
            "tool-results" => Some(Scope::ToolResults),
            "all" => Some(Scope::All),
            _ => None,
        }
    }
}

/// One step of a path into a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(&'static str),
    Index(usize),
}

/// A string of a message that offload may shorten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Index of the message in the list the sites were found in.
    pub message: usize,
    /// Where the string is inside the message.
    pub path: Vec<Step>,
    /// Its exact token count.
    pub tokens: usize,
    /// A tool result (true) or message text (false).
    pub tool_result: bool,
}

impl Site {
    /// `messages.<index>.content.0.content` for the message at `index` of the output.
    pub fn path_at(&self, index: usize) -> String {
        let mut out = format!("messages.{index}");
        for step in &self.path {
            match step {
                Step::Key(key) => {
                    let _ = write!(out, ".{key}");
                }
                Step::Index(i) => {
                    let _ = write!(out, ".{i}");
                }
            }
        }
        out
    }
}

fn string_at<'a>(message: &'a Value, path: &[Step]) -> Option<&'a str> {
    let mut value = message;
    for step in path {
        value = match step {
            Step::Key(key) => value.get(*key)?,
            Step::Index(i) => value.get(*i)?,
        };
    }
    value.as_str()
}

fn string_at_mut<'a>(message: &'a mut Value, path: &[Step]) -> Option<&'a mut String> {
    let mut value = message;
    for step in path {
        value = match step {
            Step::Key(key) => value.get_mut(*key)?,
            Step::Index(i) => value.get_mut(*i)?,
        };
    }
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The strings of `content` (a string, or text parts / blocks) under `base`.
fn text_paths(content: Option<&Value>, base: Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match content {
        Some(Value::String(_)) => out.push(base),
        Some(Value::Array(parts)) => {
            for (i, part) in parts.iter().enumerate() {
                if matches!(block_type(part), "text" | "input_text" | "output_text")
                    && part.get("text").is_some_and(Value::is_string)
                {
                    let mut path = base.clone();
                    path.push(Step::Index(i));
                    path.push(Step::Key("text"));
                    out.push(path);
                }
            }
        }
        _ => {}
    }
}

/// The shortenable strings of one message, with whether each is a tool result.
fn message_sites(message: &Value, scope: Scope) -> Vec<(Vec<Step>, bool)> {
    if scope == Scope::Off || added::is_summary_message(message) {
        return Vec::new();
    }
    let content = message.get("content");
    let mut out = Vec::new();
    match role_of(message) {
        Some(Role::Tool | Role::Function) => {
            let mut paths = Vec::new();
            text_paths(content, vec![Step::Key("content")], &mut paths);
            out.extend(paths.into_iter().map(|p| (p, true)));
        }
        Some(Role::User | Role::Assistant) => {
            if let Some(Value::Array(blocks)) = content {
                for (b, block) in blocks.iter().enumerate() {
                    if block_type(block) == "tool_result" {
                        let mut paths = Vec::new();
                        text_paths(
                            block.get("content"),
                            vec![Step::Key("content"), Step::Index(b), Step::Key("content")],
                            &mut paths,
                        );
                        out.extend(paths.into_iter().map(|p| (p, true)));
                    }
                }
            }
            if scope == Scope::All {
                let mut paths = Vec::new();
                text_paths(content, vec![Step::Key("content")], &mut paths);
                out.extend(paths.into_iter().map(|p| (p, false)));
            }
        }
        _ => {}
    }
    out
}

/// The shortenable strings of `messages[indices]`, with their token counts.
pub fn find_sites(
    messages: &[Value],
    indices: impl IntoIterator<Item = usize>,
    scope: Scope,
    encoding: Encoding,
) -> Vec<Site> {
    let mut sites = Vec::new();
    for index in indices {
        let message = &messages[index];
        for (path, tool_result) in message_sites(message, scope) {
            let Some(text) = string_at(message, &path) else {
                continue;
            };
            sites.push(Site {
                message: index,
                tokens: tokens::count_text(encoding, text),
                path,
                tool_result,
            });
        }
    }
    sites
}

/// Tokens always kept of a shortened text, so the agent still sees what kind of output it was.
pub const MIN_KEPT_TOKENS: usize = 100;
/// What the marker costs, generously (it names the archive path).
pub const MARKER_TOKENS: usize = 80;

/// How many tokens to keep of each site so that together they shrink by at least `reduce`
/// raw tokens, taking from the largest first ("water filling": every site above a common
/// cap is cut to the cap, the lowest cap that gives the reduction). A site is only cut when
/// that saves more than its marker costs. Returns `(site index, tokens to keep)`; when even
/// cutting everything to [`MIN_KEPT_TOKENS`] is not enough, that is what is returned.
pub fn plan_cuts(sites: &[Site], reduce: usize) -> Vec<(usize, usize)> {
    if reduce == 0 {
        return Vec::new();
    }
    let saving = |cap: usize| -> usize {
        sites
            .iter()
            .map(|s| s.tokens.saturating_sub(cap + MARKER_TOKENS))
            .sum()
    };
    let largest = sites.iter().map(|s| s.tokens).max().unwrap_or(0);
    if largest <= MIN_KEPT_TOKENS + MARKER_TOKENS {
        return Vec::new();
    }
    // The highest cap whose saving is still enough (saving falls as the cap rises).
    let (mut low, mut high) = (MIN_KEPT_TOKENS, largest);
    if saving(low) < reduce {
        high = low;
    }
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if saving(mid) >= reduce {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let cap = low;
    sites
        .iter()
        .enumerate()
        .filter(|(_, s)| s.tokens > cap + MARKER_TOKENS)
        .map(|(i, _)| (i, cap))
        .collect()
}

/// Where the original of a shortened message is: which archive, and which message of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginalRef<'a> {
    /// The archive path as the marker names it (`None`: it could not be archived).
    pub archive: Option<&'a str>,
    /// The index of the original in that archive, or in its `keptOriginals.shortened`.
    pub item: usize,
    /// The original is in the archive's `keptOriginals.shortened` (a compaction's fit step: the
    /// originals of the kept messages a compaction changed belong to its one archive); false:
    /// it is a message of an archive of originals (`offloadToolResults`, and compactions before
    /// one compaction took one number).
    pub kept_originals: bool,
}

const MARKER_OPEN: &str = "[… context-compact: ";
const MARKER_ELIDED: &str = " tokens elided from this ";
const MARKER_ORIGINAL: &str = ". The full original is ";
/// `message <i>`: the i-th message of an archive of originals.
const MARKER_ITEM: &str = "message ";
/// `keptOriginals.shortened[<i>]`: in a compaction's archive.
const MARKER_KEPT_ITEM: &str = "keptOriginals.shortened[";
const MARKER_KEPT_ITEM_END: &str = "]";
const MARKER_ARCHIVE: &str = " of the archive ";
const MARKER_NOT_ARCHIVED: &str = ". The original could not be archived";
const MARKER_CLOSE: &str = " …]";

fn marker(elided: usize, tool_result: bool, original: &OriginalRef<'_>) -> String {
    let what = if tool_result {
        "tool result"
    } else {
        "message"
    };
    match original.archive {
        Some(archive) if original.kept_originals => format!(
            "{MARKER_OPEN}{elided}{MARKER_ELIDED}{what}{MARKER_ORIGINAL}{MARKER_KEPT_ITEM}{}{MARKER_KEPT_ITEM_END}{MARKER_ARCHIVE}{archive}{MARKER_CLOSE}",
            original.item
        ),
        Some(archive) => format!(
            "{MARKER_OPEN}{elided}{MARKER_ELIDED}{what}{MARKER_ORIGINAL}{MARKER_ITEM}{}{MARKER_ARCHIVE}{archive}{MARKER_CLOSE}",
            original.item
        ),
        None => format!("{MARKER_OPEN}{elided}{MARKER_ELIDED}{what}{MARKER_NOT_ARCHIVED}{MARKER_CLOSE}"),
    }
}

/// The original a shortened message names in its marker, if it holds one.
pub fn original_of(message: &Value) -> Option<OriginalRef<'_>> {
    for (path, _) in message_sites(message, Scope::All) {
        let Some(text) = string_at(message, &path) else {
            continue;
        };
        let Some(start) = text.find(MARKER_OPEN) else {
            continue;
        };
        let rest = &text[start + MARKER_OPEN.len()..];
        let Some(end) = rest.find(MARKER_CLOSE) else {
            continue;
        };
        let inner = &rest[..end];
        let Some((_, original)) = inner.split_once(MARKER_ORIGINAL) else {
            continue;
        };
        let Some((item, archive)) = original.split_once(MARKER_ARCHIVE) else {
            continue;
        };
        let (item, kept_originals) = match item.strip_prefix(MARKER_KEPT_ITEM) {
            Some(kept) => (kept.strip_suffix(MARKER_KEPT_ITEM_END), true),
            None => (item.strip_prefix(MARKER_ITEM), false),
        };
        if let Some(Ok(item)) = item.map(str::parse) {
            return Some(OriginalRef {
                archive: Some(archive.trim()),
                item,
                kept_originals,
            });
        }
    }
    None
}

/// `text` cut to about `keep` tokens — two thirds from its start, one third from its end, at
/// line ends where one is near — with `marker` between the two parts.
pub fn shorten(text: &str, keep: usize, encoding: Encoding, marker: &str) -> String {
    let total = tokens::count_text(encoding, text).max(1);
    let chars_per_token = text.len() as f64 / total as f64;
    let keep_bytes = ((keep as f64) * chars_per_token) as usize;
    let head_goal = floor_char_boundary(text, keep_bytes * 2 / 3);
    let tail_goal = ceil_char_boundary(text, text.len().saturating_sub(keep_bytes / 3));
    // Prefer whole lines when a line end is within the last fifth of the part.
    let head_end = text[..head_goal]
        .rfind('\n')
        .filter(|&i| i + 1 >= head_goal - head_goal / 5)
        .map_or(head_goal, |i| i + 1);
    let tail_start = text[tail_goal..]
        .find('\n')
        .filter(|&i| i <= (text.len() - tail_goal) / 5)
        .map_or(tail_goal, |i| tail_goal + i + 1)
        .max(head_end);
    let mut out = String::with_capacity(head_end + marker.len() + (text.len() - tail_start) + 4);
    out.push_str(&text[..head_end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(marker);
    out.push('\n');
    out.push_str(&text[tail_start..]);
    out
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// One shortened string, as the result reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Offloaded {
    /// The message's index in the returned list.
    pub index: usize,
    /// Its index in the list that was passed in.
    pub original_index: usize,
    /// Where the shortened string is: `messages.7.content.0.content`.
    pub path: String,
    /// Tokens before and after (the kept text plus the marker).
    pub original_tokens: usize,
    pub tokens: usize,
    /// A tool result, or (with `offload: 'all'`) message text.
    pub kind: &'static str,
}

/// The cuts of one message: `(site, tokens to keep)`.
pub type MessageCuts = Vec<(Site, usize)>;

/// A copy of `message` with its `cuts` applied. `original` says where the message's original
/// will be (the same for all its cuts). Returns the message and, per cut, its new token count.
pub fn apply_cuts(
    message: &Value,
    cuts: &[(Site, usize)],
    original: &OriginalRef<'_>,
    encoding: Encoding,
) -> (Value, Vec<usize>) {
    let mut out = message.clone();
    let mut counts = Vec::with_capacity(cuts.len());
    for (site, keep) in cuts {
        let Some(text) = string_at_mut(&mut out, &site.path) else {
            counts.push(site.tokens);
            continue;
        };
        let elided = site.tokens.saturating_sub(*keep);
        let shortened = shorten(
            text,
            *keep,
            encoding,
            &marker(elided, site.tool_result, original),
        );
        counts.push(tokens::count_text(encoding, &shortened));
        *text = shortened;
    }
    (out, counts)
}

/// The cuts of `plan` grouped by message, in message order.
pub fn cuts_by_message(sites: &[Site], plan: &[(usize, usize)]) -> Vec<(usize, MessageCuts)> {
    let mut grouped: Vec<(usize, MessageCuts)> = Vec::new();
    let mut sorted: Vec<(usize, usize)> = plan.to_vec();
    sorted.sort_unstable_by_key(|(site, _)| (sites[*site].message, *site));
    for (site, keep) in sorted {
        let site = sites[site].clone();
        match grouped.last_mut() {
            Some((message, cuts)) if *message == site.message => cuts.push((site, keep)),
            _ => grouped.push((site.message, vec![(site, keep)])),
        }
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const E: Encoding = Encoding::O200kBase;

    fn long_text(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line {i}: some output of a command that ran for a while\n"))
            .collect()
    }

    #[test]
    fn sites_are_tool_results_unless_all_text_is_in_scope() {
        let messages = vec![
            json!({"role": "user", "content": "hello"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls"}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "a\nb"}, {"type": "tool_result", "tool_use_id": "u", "content": [{"type": "text", "text": "x"}, {"type": "image", "source": {}}]}]}),
            json!({"role": "tool", "tool_call_id": "c", "content": "out"}),
        ];
        let sites = find_sites(&messages, 0..4, Scope::ToolResults, E);
        let paths: Vec<String> = sites.iter().map(|s| s.path_at(s.message)).collect();
        assert_eq!(
            paths,
            [
                "messages.2.content.0.content",
                "messages.2.content.1.content.0.text",
                "messages.3.content"
            ]
        );
        assert!(sites.iter().all(|s| s.tool_result));
        let all = find_sites(&messages, 0..4, Scope::All, E);
        let paths: Vec<String> = all.iter().map(|s| s.path_at(s.message)).collect();
        assert!(paths.contains(&"messages.0.content".to_string()));
        assert!(paths.contains(&"messages.1.content.0.text".to_string()));
        assert!(find_sites(&messages, 0..4, Scope::Off, E).is_empty());
    }

    #[test]
    fn cuts_take_from_the_largest_first_and_only_as_much_as_needed() {
        let site = |message, tokens| Site {
            message,
            path: vec![Step::Key("content")],
            tokens,
            tool_result: true,
        };
        let sites = vec![site(0, 10_000), site(1, 3_000), site(2, 500)];
        // 2 000 tokens: only the largest is cut, to about 8 000 − the marker.
        let plan = plan_cuts(&sites, 2_000);
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].0, 0);
        let saved = 10_000 - plan[0].1 - MARKER_TOKENS;
        assert!((2_000..2_010).contains(&saved), "{saved}");
        // 9 000: the two largest are cut to one cap.
        let plan = plan_cuts(&sites, 9_000);
        assert_eq!(plan.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(plan[0].1, plan[1].1);
        // More than can be saved: everything above the floor goes to the floor.
        let plan = plan_cuts(&sites, 100_000);
        assert!(plan.iter().all(|c| c.1 == MIN_KEPT_TOKENS));
        assert_eq!(plan.len(), 3);
        assert!(plan_cuts(&sites, 0).is_empty());
    }

    #[test]
    fn shortened_text_keeps_head_and_end_and_names_the_original() {
        let text = long_text(2_000);
        let message = json!({"role": "tool", "tool_call_id": "c", "content": text, "extra": 1});
        let sites = find_sites(std::slice::from_ref(&message), [0], Scope::ToolResults, E);
        let original = OriginalRef {
            archive: Some("/tmp/x/s/compact-20260101T000000Z-3.json"),
            item: 2,
            kept_originals: true,
        };
        let (short, counts) = apply_cuts(&message, &[(sites[0].clone(), 500)], &original, E);
        let content = short["content"].as_str().unwrap();
        assert!(content.starts_with("line 0: "));
        assert!(content
            .trim_end()
            .ends_with("line 1999: some output of a command that ran for a while"));
        assert!(counts[0] < 500 + MARKER_TOKENS + 40, "{}", counts[0]);
        assert!(counts[0] > 400, "{}", counts[0]);
        assert_eq!(short["extra"], 1);
        assert_eq!(short["tool_call_id"], "c");
        let found = original_of(&short).unwrap();
        assert_eq!(found, original);
        assert!(content.contains(&format!("{} tokens elided", sites[0].tokens - 500)));
        assert!(original_of(&message).is_none());
    }

    #[test]
    fn markers_name_the_kept_originals_of_a_compaction_or_a_message_of_an_archive() {
        let text = long_text(500);
        let message = json!({"role": "tool", "tool_call_id": "c", "content": text});
        let sites = find_sites(std::slice::from_ref(&message), [0], Scope::ToolResults, E);
        let archive = "/tmp/x/s/compact-20260101T000000Z-3.json";
        for (kept_originals, locator) in [
            (true, "keptOriginals.shortened[4] of the archive "),
            (false, "message 4 of the archive "),
        ] {
            let original = OriginalRef {
                archive: Some(archive),
                item: 4,
                kept_originals,
            };
            let (short, _) = apply_cuts(&message, &[(sites[0].clone(), 100)], &original, E);
            let content = short["content"].as_str().unwrap();
            assert!(
                content.contains(&format!("The full original is {locator}{archive} …]")),
                "{content}"
            );
            assert_eq!(original_of(&short), Some(original));
        }
        let lost = OriginalRef {
            archive: None,
            item: 0,
            kept_originals: true,
        };
        let (short, _) = apply_cuts(&message, &[(sites[0].clone(), 100)], &lost, E);
        assert!(original_of(&short).is_none());
    }

    #[test]
    fn shortening_never_splits_a_character() {
        let text = "é漢🎉".repeat(5_000);
        for keep in [1, 7, 100, 1_000] {
            let out = shorten(&text, keep, E, "[marker]");
            assert!(out.contains("[marker]"));
        }
        assert!(shorten("", 10, E, "[m]").contains("[m]"));
    }
}
