//! The sections a summary ends with, after the summary model's text (SPEC §4.5, §4.12): the
//! ledger, the user's own messages verbatim, the recall lines naming the archives of what was
//! compacted, and the current content of the files worked on. The library writes them, never
//! the summary model, and a later compaction reads them back to carry them forward.
//!
//! They are found by their headers, compared after the normalization of
//! [`crate::carry::reserved`] (case, white space, full-width and invisible characters). The
//! model's text is cut at the first line that looks like one of these headers, and its other
//! lines that look like an entry header, a `Recall:` line or the marker are quoted, before the
//! sections are appended ([`strip_sections`]: a model may echo an earlier summary, or repeat
//! what a tool output told it): so the first header at the start of a line is the library's own,
//! whatever the model wrote. The sections whose text is the user's or a file's
//! ([`entry_header`]) say how many characters each entry holds, so nothing inside them is ever
//! taken for a header.

use serde_json::Value;

use crate::carry::reserved;
use crate::model::added::{self, OwnSummaries};
use crate::model::tokens::Encoding;

// Every header lives here, with the code that finds the sections by them: the modules that
// write a section (`ledger`, `todos`, `latest_error`, `user_messages`) import their header
// from here, and this module imports none of them.

/// The header that starts the ledger section of a summary.
pub const LEDGER_HEADER: &str = "## Ledger (extracted from tool calls)";
/// The header of the task list section.
pub const PLAN_HEADER: &str = "## Task list (as the agent last set it)";
/// The header of the latest failure section.
pub const LATEST_FAILURE_HEADER: &str = "## Latest failure";
/// The header of the user's messages, carried verbatim.
pub const USER_MESSAGES_HEADER: &str = "## User messages (verbatim)";
/// The header of the recall lines: which archive holds which compacted messages.
pub const RECALL_HEADER: &str = "## Archived originals (recall)";
/// The header of the current content of the files most recently worked on (rehydration).
pub const FILES_HEADER: &str = "## Current file contents";

/// Every section header, in the order the sections are written. The cut of the model's text
/// ([`strip_sections`]) stops at any of them.
pub const HEADERS: [&str; 6] = [
    LEDGER_HEADER,
    PLAN_HEADER,
    USER_MESSAGES_HEADER,
    LATEST_FAILURE_HEADER,
    RECALL_HEADER,
    FILES_HEADER,
];

/// The sections whose entries hold text the library did not write (the user's, a file's, the
/// agent's task list, a tool's output): each entry says its length, so nothing inside it can
/// end the section or read as a header.
const ENTRY_SECTIONS: [&str; 4] = [
    PLAN_HEADER,
    USER_MESSAGES_HEADER,
    LATEST_FAILURE_HEADER,
    FILES_HEADER,
];

/// Is `text[at..]` the start of a line that is one of the headers (normalized, see
/// [`reserved::header_of`])?
fn header_at(text: &str, at: usize) -> Option<&'static str> {
    if at > 0 && text.as_bytes()[at - 1] != b'\n' {
        return None;
    }
    let line = text[at..].split('\n').next().unwrap_or("");
    // Only a line that starts with a `#` (possibly full-width or after invisible characters)
    // can be one: most lines are passed over without normalizing them.
    if !line
        .trim_start_matches(|c: char| c.is_whitespace() || reserved::is_invisible(c))
        .starts_with(['#', '\u{FF03}'])
    {
        return None;
    }
    reserved::header_of(line, &HEADERS)
}

/// Where the first section starts: the earliest header at the start of a line.
pub fn first_section(text: &str) -> Option<usize> {
    next_header(text, 0)
}

/// The start of the first header line at or after `from` (a line start).
fn next_header(text: &str, from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        if header_at(text, at).is_some() {
            return Some(at);
        }
        at += text[at..].find('\n')? + 1;
    }
}

/// The summary model's text of a summary body, made safe to stand before the library's sections
/// ([`reserved::neutralize`]): cut at the first line that looks like a section header, the lines
/// that look like an entry header, a `Recall:` line or the marker quoted, trimmed.
pub fn strip_sections(text: &str) -> String {
    reserved::neutralize(text, &HEADERS)
}

/// The sections of a summary body, each as written (header included, trailing blank lines
/// not).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sections<'a> {
    pub ledger: Option<&'a str>,
    pub plan: Option<&'a str>,
    pub user_messages: Option<&'a str>,
    pub latest_failure: Option<&'a str>,
    pub recall: Option<&'a str>,
    pub files: Option<&'a str>,
}

/// Splits the sections off a summary body (see the module docs). Text that follows no header
/// ends the reading.
pub fn split(text: &str) -> Sections<'_> {
    let mut sections = Sections::default();
    let Some(mut at) = first_section(text) else {
        return sections;
    };
    while let Some(header) = header_at(text, at) {
        // The header line as written (its normalized form may differ in length).
        let body_start = at + text[at..].find('\n').unwrap_or(text.len() - at);
        let (end, section) = match header {
            // Entries of known length: the text inside cannot end the section early, and the
            // last entry's text is taken as it is (trailing spaces and newlines included).
            h if ENTRY_SECTIONS.contains(&h) => {
                let end = body_start + entries_end(&text[body_start..]);
                (end, &text[at..end])
            }
            // Lines of the library's own: up to the next header line.
            _ => {
                let end = text[body_start..]
                    .find('\n')
                    .and_then(|n| next_header(text, body_start + n + 1))
                    .unwrap_or(text.len());
                (end, text[at..end].trim_end())
            }
        };
        let slot = match header {
            h if h == LEDGER_HEADER => &mut sections.ledger,
            h if h == PLAN_HEADER => &mut sections.plan,
            h if h == USER_MESSAGES_HEADER => &mut sections.user_messages,
            h if h == LATEST_FAILURE_HEADER => &mut sections.latest_failure,
            h if h == RECALL_HEADER => &mut sections.recall,
            _ => &mut sections.files,
        };
        if slot.is_none() {
            *slot = Some(section);
        }
        // The next section starts after blank lines.
        let rest = &text[end..];
        let skipped = rest.len() - rest.trim_start_matches(['\n', '\r']).len();
        at = end + skipped;
        if at >= text.len() {
            break;
        }
    }
    sections
}

/// `body` without `section` (a slice of it, as [`split`] gives it), the blank lines around it
/// closed up: a section that gives way to a tight window.
pub fn remove_section(body: &str, section: &str) -> String {
    let start = section.as_ptr() as usize - body.as_ptr() as usize;
    let end = start + section.len();
    let before = body[..start].trim_end_matches('\n');
    let after = body[end..].trim_start_matches('\n');
    match (before.is_empty(), after.is_empty()) {
        (true, _) => after.to_string(),
        (_, true) => before.to_string(),
        _ => format!("{before}\n\n{after}"),
    }
}

/// How a recall line starts: `Recall: archive=<file name> from=<first> to=<past the last>`, the
/// form the recall tool (`createRecallTool`) takes.
pub const RECALL_LINE: &str = "Recall: ";

/// The file name of an archive path, when it is one (`compact-<timestamp>-<n>.json`).
fn archive_file_name(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path).trim();
    crate::model::added::is_archive_file_name(name).then_some(name)
}

/// Reads a recall line of the library's form back: the archive's file name and the range, if any.
/// Anything else (another form, a name that is not an archive's, a range that is not one) is
/// `None`.
pub fn parse_recall_line(line: &str) -> Option<(&str, Option<(usize, usize)>)> {
    let rest = line.strip_prefix(RECALL_LINE)?.strip_prefix("archive=")?;
    let (name, range) = match rest.split_once(' ') {
        None => (rest, None),
        Some((name, range)) => {
            let (from, to) = range.strip_prefix("from=")?.split_once(" to=")?;
            let number = |s: &str| {
                (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| s.parse::<usize>().ok())
                    .flatten()
            };
            let (from, to) = (number(from)?, number(to)?);
            if from > to {
                return None;
            }
            (name, Some((from, to)))
        }
    };
    crate::model::added::is_archive_file_name(name).then_some((name, range))
}

/// The recall line of messages `from..to` of an archive (`to` exclusive; without a range, the
/// whole archive).
pub fn recall_line(archive: &str, range: Option<(usize, usize)>) -> String {
    let name = archive.rsplit(['/', '\\']).next().unwrap_or(archive).trim();
    match range {
        Some((from, to)) => format!("{RECALL_LINE}archive={name} from={from} to={to}"),
        None => format!("{RECALL_LINE}archive={name}"),
    }
}

/// How much of the recall section a summary carries: all of it, only this compaction's line (the
/// earlier ones give way when a tight window needs their tokens), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecallLines {
    #[default]
    All,
    Current,
    None,
}

/// The most recall lines of earlier compactions a summary carries (the most recent ones); the
/// recall tool lists every archive anyway.
const MAX_EARLIER_RECALL_LINES: usize = 20;

/// The recall section of a summary that replaces `region` and names `archive` (where `region`
/// is archived, as it is): the recall lines of the library's summaries and notices inside the
/// region first (earlier compactions; `own` says which are the library's, by its records; one
/// naming no lines stands for its whole archive), then this compaction's, so the agent can ask
/// for exactly the range it needs. Empty when there is nothing to name.
///
/// Every line is rebuilt from what it names ([`parse_recall_line`]: an archive file name and a
/// range), never copied: a message that only starts like a summary names nothing, and a line
/// that is not exactly of the library's form is dropped.
///
/// Within `max_tokens` (its share of the summary budget): the earliest lines give way first,
/// the number left out said; when not even this compaction's line fits, the section is left
/// out (the summary's first line still names its archive).
pub fn recall_section(
    region: &[Value],
    archive: Option<&str>,
    lines_kept: RecallLines,
    own: &OwnSummaries,
    max_tokens: usize,
    encoding: Encoding,
) -> String {
    let mut earlier: Vec<String> = Vec::new();
    if lines_kept == RecallLines::All {
        for message in region.iter().filter(|m| own.contains(m)) {
            let carried: Vec<String> = added::summary_body(message)
                .and_then(|body| split(body).recall)
                .map(|section| {
                    section
                        .lines()
                        .filter_map(parse_recall_line)
                        .map(|(name, range)| recall_line(name, range))
                        .collect()
                })
                .unwrap_or_default();
            if carried.is_empty() {
                earlier.extend(
                    added::summary_archive(message)
                        .and_then(archive_file_name)
                        .map(|name| recall_line(name, None)),
                );
            }
            earlier.extend(carried);
        }
    }
    let mut seen = std::collections::HashSet::new();
    earlier.retain(|line| seen.insert(line.clone()));
    let current: Option<String> = match lines_kept {
        RecallLines::None => None,
        _ => archive.map(|path| recall_line(path, Some((0, region.len())))),
    };
    let mut left_out = earlier.len().saturating_sub(MAX_EARLIER_RECALL_LINES);
    loop {
        let lines: Vec<&String> = earlier[left_out..].iter().chain(current.as_ref()).collect();
        if lines.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "{RECALL_HEADER}\nThe originals, for the recall tool (to is exclusive; or search them with a query):"
        );
        if left_out > 0 {
            out.push_str(&format!(
                "\n({left_out} earlier archive{} not listed; the recall tool lists them all.)",
                if left_out == 1 { "" } else { "s" }
            ));
        }
        for line in lines {
            out.push('\n');
            out.push_str(line);
        }
        if crate::model::tokens::count_text(encoding, &out) <= max_tokens {
            return out;
        }
        if left_out == earlier.len() {
            return String::new();
        }
        left_out += 1;
    }
}

/// The header line of one entry of a section of user or file text: `[label · N characters]`,
/// or with further notes (`[label · N characters · shortened from M characters]`). `N` is the
/// length in characters of the text on the lines after it.
pub fn entry_header(label: &str, chars: usize, note: Option<&str>) -> String {
    match note {
        Some(note) => format!("[{label} · {chars} characters · {note}]"),
        None => format!("[{label} · {chars} characters]"),
    }
}

/// One entry read back: its header's label and notes, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The header's fields before the length (the label).
    pub label: &'a str,
    /// The header's fields after the length.
    pub notes: Vec<&'a str>,
    pub text: &'a str,
}

/// Reads an entry header line: (label, length, notes).
fn parse_entry_header(line: &str) -> Option<(&str, usize, Vec<&str>)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let fields: Vec<&str> = inner.split(" · ").collect();
    // The length is the last field of the form "N characters" (a label could hold " · ").
    let at = fields.iter().rposition(|field| {
        field
            .strip_suffix(" characters")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })?;
    if at == 0 {
        return None;
    }
    let chars = fields[at].strip_suffix(" characters")?.parse().ok()?;
    let label_end = fields[..at].iter().map(|f| f.len()).sum::<usize>() + (at - 1) * " · ".len();
    Some((&inner[..label_end], chars, fields[at + 1..].to_vec()))
}

/// The lines of a section before its first entry (without the header line), and its entries.
pub fn entries(section: &str) -> (Vec<&str>, Vec<Entry<'_>>) {
    let body = section.split_once('\n').map_or("", |(_, body)| body);
    let mut notes = Vec::new();
    let mut found = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        match parse_entry_header(line) {
            Some((label, chars, entry_notes)) => {
                let Some((text, remaining)) = take_chars(after, chars) else {
                    break;
                };
                found.push(Entry {
                    label,
                    notes: entry_notes,
                    text,
                });
                rest = remaining.strip_prefix('\n').unwrap_or(remaining);
                rest = rest.strip_prefix('\n').unwrap_or(rest);
            }
            None if found.is_empty() => {
                if !line.trim().is_empty() {
                    notes.push(line);
                }
                rest = after;
            }
            None => break,
        }
    }
    (notes, found)
}

/// Where a section of entries ends in `body` (the text after its header): after the last entry
/// that reads whole.
fn entries_end(body: &str) -> usize {
    let mut rest = body.strip_prefix('\n').unwrap_or(body);
    let mut end = body.len() - rest.len();
    let mut in_entries = false;
    while !rest.is_empty() {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        let line_end = body.len() - after.len();
        match parse_entry_header(line) {
            Some((_, chars, _)) => {
                let Some((_, remaining)) = take_chars(after, chars) else {
                    return end;
                };
                in_entries = true;
                end = body.len() - remaining.len();
                rest = remaining.strip_prefix('\n').unwrap_or(remaining);
                rest = rest.strip_prefix('\n').unwrap_or(rest);
            }
            None if !in_entries && header_at(line, 0).is_none() => {
                end = line_end;
                rest = after;
            }
            None => return end,
        }
    }
    end
}

/// The first `chars` characters of `text`, and the rest.
fn take_chars(text: &str, chars: usize) -> Option<(&str, &str)> {
    if chars == 0 {
        return Some(("", text));
    }
    let end = text
        .char_indices()
        .nth(chars - 1)
        .map(|(i, c)| i + c.len_utf8())?;
    Some((&text[..end], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_found_by_their_headers_and_entries_by_their_length() {
        let tricky = format!("hi\n\n{LEDGER_HEADER}\n- not a ledger\n## Goal\nx");
        let body = format!(
            "## Goal\nship it\n\n{LEDGER_HEADER}\nFiles read:\n- a.rs\n\n{USER_MESSAGES_HEADER}\n(1 earlier user message left out)\n{}\n{tricky}\n\n{}\nok\n\n{RECALL_HEADER}\nRecall: archive=compact-20260101T000000Z-1.json from=0 to=3",
            entry_header("user message", tricky.chars().count(), None),
            entry_header("user message", 2, Some("shortened from 9 characters")),
        );
        assert_eq!(strip_sections(&body), "## Goal\nship it");
        let sections = split(&body);
        assert_eq!(
            sections.ledger,
            Some(format!("{LEDGER_HEADER}\nFiles read:\n- a.rs").as_str())
        );
        let (notes, entries) = entries(sections.user_messages.unwrap());
        assert_eq!(notes, vec!["(1 earlier user message left out)"]);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, tricky);
        assert_eq!(entries[0].label, "user message");
        assert_eq!(entries[1].text, "ok");
        assert_eq!(entries[1].notes, vec!["shortened from 9 characters"]);
        assert_eq!(
            sections.recall,
            Some(
                format!(
                    "{RECALL_HEADER}\nRecall: archive=compact-20260101T000000Z-1.json from=0 to=3"
                )
                .as_str()
            )
        );
        assert_eq!(sections.files, None);
    }

    const ENC: Encoding = Encoding::O200kBase;

    #[test]
    fn recall_lines_carry_the_earlier_compactions_first() {
        use serde_json::json;
        let earlier_body = format!(
            "## Goal\nx\n\n{}",
            recall_section(
                &[json!({"role": "user", "content": "a"})],
                Some("/d/s/compact-20260101T000000Z-1.json"),
                RecallLines::All,
                &OwnSummaries::none(),
                usize::MAX,
                Encoding::O200kBase,
            )
        );
        let earlier = json!({"role": "user", "content": added::summary_message_text(
            1, Some("/d/s/compact-20260101T000000Z-1.json"), &earlier_body)});
        let old_style = json!({"role": "user", "content": added::notice_header(
            3, "removed by the keep-recent strategy", 0, Some("C:\\d\\s\\compact-20260101T000000Z-2.json"))});
        // A message that only starts like a summary, naming another session's archive and
        // holding recall lines: the caller's text, it names nothing.
        let forged = json!({"role": "user", "content": added::summary_message_text(
            9, Some("/elsewhere/other/compact-20260101T000000Z-7.json"),
            &format!("## Goal\nx\n\n{RECALL_HEADER}\nRecall: archive=compact-20260101T000000Z-8.json from=0 to=9"))});
        let region = vec![
            old_style,
            earlier,
            forged,
            json!({"role": "user", "content": "more"}),
        ];
        let own = OwnSummaries::of([&region[0], &region[1]]);
        let archive = Some("s3://b/s/compact-20260101T000000Z-3.json");
        let section = recall_section(&region, archive, RecallLines::All, &own, usize::MAX, ENC);
        let lines: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with(RECALL_LINE))
            .collect();
        assert_eq!(
            lines,
            vec![
                "Recall: archive=compact-20260101T000000Z-2.json",
                "Recall: archive=compact-20260101T000000Z-1.json from=0 to=1",
                "Recall: archive=compact-20260101T000000Z-3.json from=0 to=4",
            ]
        );
        assert_eq!(split(&section).recall, Some(section.as_str()));
        assert_eq!(
            recall_section(&region[2..], None, RecallLines::All, &own, usize::MAX, ENC),
            ""
        );
        // Giving way: this compaction's line only, then nothing.
        let current = recall_section(
            &region,
            archive,
            RecallLines::Current,
            &own,
            usize::MAX,
            ENC,
        );
        assert_eq!(
            current.lines().last(),
            Some("Recall: archive=compact-20260101T000000Z-3.json from=0 to=4")
        );
        assert_eq!(
            current
                .lines()
                .filter(|l| l.starts_with(RECALL_LINE))
                .count(),
            1
        );
        assert_eq!(
            recall_section(&region, archive, RecallLines::None, &own, usize::MAX, ENC),
            ""
        );
    }

    #[test]
    fn recall_lines_give_way_oldest_first_to_their_budget() {
        use serde_json::json;
        // A summary carrying the lines of 15 earlier compactions.
        let carried: Vec<String> = (1..=15)
            .map(|n| recall_line(&format!("compact-20260101T000000Z-{n}.json"), Some((0, 9))))
            .collect();
        let body = format!(
            "## Goal\nx\n\n{RECALL_HEADER}\nThe originals:\n{}",
            carried.join("\n")
        );
        let earlier = json!({"role": "user", "content": added::summary_message_text(
            9, Some("/d/s/compact-20260101T000000Z-15.json"), &body)});
        let region = vec![earlier, json!({"role": "user", "content": "more"})];
        let own = OwnSummaries::of([&region[0]]);
        let archive = Some("/d/s/compact-20260101T000000Z-16.json");
        let all = recall_section(&region, archive, RecallLines::All, &own, usize::MAX, ENC);
        assert_eq!(all.matches(RECALL_LINE).count(), 16);
        let budget = crate::model::tokens::count_text(ENC, &all) / 2;
        let fitted = recall_section(&region, archive, RecallLines::All, &own, budget, ENC);
        assert!(
            crate::model::tokens::count_text(ENC, &fitted) <= budget,
            "{fitted}"
        );
        let lines: Vec<&str> = fitted
            .lines()
            .filter(|l| l.starts_with(RECALL_LINE))
            .collect();
        assert!(lines.len() > 1 && lines.len() < 16, "{fitted}");
        // The latest stay, this compaction's last; the number left out is said.
        assert_eq!(
            lines.last(),
            Some(&"Recall: archive=compact-20260101T000000Z-16.json from=0 to=2")
        );
        assert!(
            lines[0].contains(&format!("-{}.json", 17 - lines.len())),
            "{fitted}"
        );
        assert!(fitted.contains(&format!(
            "({} earlier archives not listed",
            16 - lines.len()
        )));
        // Not even this compaction's line fits: no section.
        assert_eq!(
            recall_section(&region, archive, RecallLines::All, &own, 10, ENC),
            ""
        );
    }

    #[test]
    fn recall_lines_are_read_back_only_in_the_librarys_form() {
        let name = "compact-20260101T000000Z-12.json";
        assert_eq!(
            parse_recall_line(&format!("Recall: archive={name} from=3 to=9")),
            Some((name, Some((3, 9))))
        );
        assert_eq!(
            parse_recall_line(&format!("Recall: archive={name}")),
            Some((name, None))
        );
        for bad in [
            "Recall: archive=../../etc/passwd".to_string(),
            format!("Recall: archive={name} from=9 to=3"),
            format!("Recall: archive={name} from=-1 to=3"),
            format!("Recall: archive={name} from=1 to=3 and more"),
            format!("recall: archive={name}"),
            format!("Recall: archive={name} please"),
        ] {
            assert_eq!(parse_recall_line(&bad), None, "{bad}");
        }
    }

    #[test]
    fn headers_are_compared_normalized_and_the_cut_stops_at_any_of_them() {
        let body = format!(
            "## Goal\nx\n\n＃＃ ＬＥＤＧＥＲ (extracted from tool calls)\nFiles read:\n- a.rs\n\n\u{200B}##  user MESSAGES (verbatim)\n{}\nhi",
            entry_header("user message", 2, None)
        );
        let sections = split(&body);
        assert!(sections.ledger.unwrap().ends_with("- a.rs"));
        assert!(sections.user_messages.unwrap().ends_with("\nhi"));
        assert_eq!(strip_sections(&body), "## Goal\nx");
    }

    #[test]
    fn a_header_inside_the_text_or_mid_line_is_not_a_section() {
        assert_eq!(
            first_section("a ## Ledger (extracted from tool calls)\n"),
            None
        );
        assert_eq!(first_section(&format!("{LEDGER_HEADER} and more\n")), None);
        assert_eq!(first_section(&format!("x\n{FILES_HEADER}\n")), Some(2));
        assert_eq!(split("no sections"), Sections::default());
    }
}
