//! Step 4, **rehydrate** (SPEC §4.12): after the summary, the current content of the files the
//! agent touched most recently, so that it does not have to read each one again (a tool round
//! trip each) or work from memory. Claude Code attaches the 5 most recently read files again
//! after its compaction; this is that, for every agent loop.
//!
//! - Which files: those the tool calls touched (read, created, modified; the ledger's file
//!   operations), last touched first; a file deleted last is not one. Files whose whole content
//!   is already visible in the kept messages (a whole read or a whole write in the tail) are
//!   skipped: the agent has them.
//! - Their content: through the caller's `read(path)` ([`FileReader`], the loop's own file
//!   access: the library never reads the disk), or, without one, from the conversation itself —
//!   the file's latest full content there (a whole read's result, a whole write's content), and
//!   only when no later edit touched it: a stale file is worse than none.
//! - Each file is cut to its budget (its beginning kept, a marker saying how much is not shown),
//!   and they share a total budget. They are written into the summary message, after the
//!   summary, so their placement is valid in every format (part of the summary turn, where
//!   Bedrock and Gemini want the roles to alternate) and `restoreMessages`, which replaces the
//!   summary message with its archive, removes them.
//! - They never push the result over the threshold: the result with them must stay within the
//!   fit step's target (the threshold less room for the next turns) and smaller than the input;
//!   files are dropped, least recent first, until it does.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::carry::ledger::{file_events, FileOp, Ledger};
use crate::carry::reserved::display_name;
use crate::carry::sections::{entry_header, FILES_HEADER};
use crate::model::added::OwnSummaries;
use crate::model::tokens::{self, Encoding};
use crate::options::CompactOptions;
use crate::pipeline::measure::Estimator;
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::draft::{Draft, Replacement};
use crate::pipeline::shared::outcome::Aborted;
use crate::pipeline::shared::pieces::{self, ArchiveRefs, Fitting};

pub use crate::options::{FileReader, Rehydrate};
pub use crate::pipeline::shared::outcome::RehydratedFile;

/// A file's content, before it is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileContent {
    pub path: String,
    pub text: String,
}

/// What was gathered: the files, last touched first, where their content came from, and what
/// went wrong reading them.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    pub files: Vec<FileContent>,
    pub from_reader: bool,
    pub warnings: Vec<String>,
}

/// How a path stands after the conversation's file operations.
#[derive(Debug, Default)]
struct Track {
    /// The position of its last operation (recency).
    last: usize,
    deleted: bool,
    /// Its latest full content, while no later operation changed it.
    content: Option<String>,
}

/// The candidates, last touched first, for the compaction of `messages[region]` (what is
/// kept after it is `messages[region.end..]`), with the content the conversation last showed
/// of each. Only operations whose call succeeded count (SPEC §11): a read the agent was denied
/// — flagged as an error or only said in the output ("Permission denied", an exit status other
/// than 0) — or a call without a result never makes the caller's `read(path)` read that file.
fn candidates(
    messages: &[Value],
    region: &Range<usize>,
    own: &OwnSummaries,
) -> Vec<(String, Option<String>)> {
    let mut tracks: HashMap<String, Track> = HashMap::new();
    let events = file_events(messages)
        .into_iter()
        .filter(|event| event.succeeded);
    for (position, event) in events.enumerate() {
        let track = tracks.entry(event.path).or_default();
        track.last = position;
        track.deleted = event.op == FileOp::Delete;
        match (event.op, event.content) {
            (_, Some(content)) => track.content = Some(content),
            // A partial read changes nothing; any other change makes what was shown stale.
            (FileOp::Read, None) => {}
            (_, None) => track.content = None,
        }
    }
    // Files whose whole content the kept messages show.
    let visible: HashSet<String> = file_events(&messages[region.end..])
        .into_iter()
        .filter(|event| event.content.is_some())
        .map(|event| event.path)
        .collect();
    let mut found: Vec<(String, Track)> = tracks
        .into_iter()
        .filter(|(path, track)| !track.deleted && !visible.contains(path))
        .collect();
    found.sort_by_key(|(_, track)| std::cmp::Reverse(track.last));
    let mut out: Vec<(String, Option<String>)> = found
        .into_iter()
        .map(|(path, track)| (path, track.content))
        .collect();
    // Files an earlier compaction's ledger names (touched before anything in the list): older
    // still, edits before reads, each list newest first. Only a reader can show them.
    // Only a summary the library recorded: a message that starts like one names nothing.
    let earlier = messages[region.clone()]
        .iter()
        .rev()
        .find(|m| own.contains(m) && !crate::model::added::is_notice(m))
        .and_then(crate::model::added::summary_body)
        .and_then(Ledger::parse);
    if let Some(earlier) = earlier {
        let older = earlier
            .files_modified
            .iter()
            .chain(&earlier.files_created)
            .rev()
            .chain(earlier.files_read.iter().rev());
        for path in older {
            if !visible.contains(path) && !out.iter().any(|(p, _)| p == path) {
                out.push((path.clone(), None));
            }
        }
    }
    out
}

/// Step 4: the files to show after the summary of `draft` (which may call the caller's
/// `read`); none after a notice or a reused checkpoint, or when `rehydrate` is off. They are
/// placed after the fit step, as many as the result holds ([`attach`]).
pub(crate) async fn gather_for(call: &Call<'_>, draft: &Draft) -> Result<Gathered, Aborted> {
    let summary = matches!(
        draft.replacement,
        Replacement::Summary(_) | Replacement::Native(_)
    );
    match (&call.options.rehydrate, summary) {
        (Some(rehydrate), true) => {
            gather(
                call.messages,
                draft.region.clone(),
                rehydrate,
                &draft.own,
                call.cancel,
            )
            .await
        }
        _ => Ok(Gathered::default()),
    }
}

/// Gathers the files to show after the summary of `messages[region]` (see the module docs).
pub(crate) async fn gather(
    messages: &[Value],
    region: Range<usize>,
    rehydrate: &Rehydrate,
    own: &OwnSummaries,
    cancel: &CancellationToken,
) -> Result<Gathered, Aborted> {
    let mut gathered = Gathered {
        from_reader: rehydrate.reader.is_some(),
        ..Gathered::default()
    };
    if rehydrate.max_files == 0 || rehydrate.max_tokens == 0 {
        return Ok(gathered);
    }
    let candidates = candidates(messages, &region, own);
    match &rehydrate.reader {
        None => {
            gathered.files = candidates
                .into_iter()
                .filter_map(|(path, content)| {
                    Some(FileContent {
                        path,
                        text: content?,
                    })
                })
                .take(rehydrate.max_files)
                .collect();
        }
        Some(reader) => {
            // A file that is gone is skipped for the next one, within reason.
            let attempts = rehydrate.max_files.saturating_mul(4);
            for (path, _) in candidates.into_iter().take(attempts) {
                if gathered.files.len() >= rehydrate.max_files {
                    break;
                }
                let read = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(Aborted),
                    read = reader.read(&path) => read,
                };
                match read {
                    Ok(Some(text)) => gathered.files.push(FileContent { path, text }),
                    Ok(None) => {}
                    Err(error) => gathered.warnings.push(format!(
                        "rehydrate: read({path:?}) failed, the file is not shown: {error}"
                    )),
                }
            }
        }
    }
    Ok(gathered)
}

/// The files section for `files` within the budgets, and what each entry is.
fn render(
    files: &[FileContent],
    from_reader: bool,
    rehydrate: &Rehydrate,
    encoding: Encoding,
) -> (String, Vec<RehydratedFile>) {
    let mut out = format!(
        "{FILES_HEADER}\nThe files worked on most recently, last touched first, {}",
        if from_reader {
            "as they are now (read when this summary was written)."
        } else {
            "as the conversation last showed them in full (no later edit touched them)."
        }
    );
    let mut shown = Vec::new();
    let mut left = rehydrate.max_tokens;
    for file in files {
        let budget = rehydrate.max_tokens_per_file.min(left);
        // Too little room to show anything of a file.
        if budget < MIN_FILE_TOKENS {
            break;
        }
        let (text, cut) = cut_to(&file.text, budget, encoding);
        let note = cut.then(|| format!("cut to {budget} tokens"));
        let entry = format!(
            "{}\n{text}",
            // The path as a name that stays on its line and cannot close the header.
            entry_header(
                &format!("file {}", display_name(&file.path)),
                text.chars().count(),
                note.as_deref()
            )
        );
        let cost = tokens::count_text(encoding, &entry);
        out.push_str(if shown.is_empty() { "\n" } else { "\n\n" });
        out.push_str(&entry);
        left = left.saturating_sub(cost);
        shown.push(RehydratedFile {
            path: file.path.clone(),
            tokens: cost,
            cut,
            source: if from_reader { "read" } else { "conversation" },
        });
    }
    (out, shown)
}

/// The fewest tokens a file is worth showing in.
const MIN_FILE_TOKENS: usize = 64;

/// `text` within `max_tokens` (its header included): as it is, or its beginning up to a line
/// end, with a marker saying how many lines are not shown.
fn cut_to(text: &str, max_tokens: usize, encoding: Encoding) -> (String, bool) {
    // The entry header's share.
    let max_tokens = max_tokens.saturating_sub(24);
    if tokens::count_text(encoding, text) <= max_tokens {
        return (text.to_string(), false);
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let total_lines = text.lines().count();
    let cut_at = |keep: usize| -> String {
        let end = chars.get(keep).map_or(text.len(), |(i, _)| *i);
        // Back to a line end when one is in the second half of what is kept.
        let end = match text[..end].rfind('\n') {
            Some(newline) if newline >= end / 2 => newline + 1,
            _ => end,
        };
        let kept = &text[..end];
        let hidden = total_lines.saturating_sub(kept.lines().count());
        format!(
            "{kept}{}[… {hidden} more line{} of this file not shown; read it for the rest …]",
            if kept.ends_with('\n') { "" } else { "\n" },
            if hidden == 1 { "" } else { "s" }
        )
    };
    let (mut low, mut high) = (0, chars.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if tokens::count_text(encoding, &cut_at(mid)) <= max_tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    (cut_at(low), true)
}

/// Puts the gathered files after the summary of `draft`, as many as the result can hold: with
/// them, the estimate stays within the fit step's target and the list smaller than the input
/// (`original_tokens`); otherwise the least recent file is dropped, and so on. Updates
/// `fitting.tokens` and returns what is shown.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attach(
    messages: &[Value],
    counts: &[usize],
    draft: &mut Draft,
    fitting: &mut Fitting,
    gathered: &Gathered,
    estimator: &Estimator,
    stand_in: &str,
    options: &CompactOptions,
    original_tokens: usize,
) -> Vec<RehydratedFile> {
    let Some(rehydrate) = &options.rehydrate else {
        return Vec::new();
    };
    if gathered.files.is_empty() || draft.sections_text_mut().is_none() {
        return Vec::new();
    }
    let refs = ArchiveRefs {
        region: Some(stand_in),
        offload: Some(stand_in),
        thinking: Some(stand_in),
    };
    let target = pieces::target(estimator, options);
    for n in (1..=gathered.files.len()).rev() {
        let (section, shown) = render(
            &gathered.files[..n],
            gathered.from_reader,
            rehydrate,
            options.encoding,
        );
        if shown.is_empty() {
            continue;
        }
        draft.rehydrated = section;
        let tokens = pieces::draft_tokens(messages, counts, draft, fitting, refs, options);
        if estimator.after(tokens) <= target && tokens < original_tokens {
            fitting.tokens = tokens;
            return shown;
        }
    }
    draft.rehydrated.clear();
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    }
    fn result(id: &str, content: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
    }

    #[test]
    fn the_latest_full_content_and_only_when_no_later_edit_touched_it() {
        let messages = vec![
            call("1", "Read", json!({"file_path": "/p/a.py"})),
            result("1", "     1→a = 1\n     2→b = 2\n"),
            call(
                "2",
                "Write",
                json!({"file_path": "/p/b.py", "content": "B1\n"}),
            ),
            result("2", "ok"),
            call("3", "Read", json!({"file_path": "/p/c.py"})),
            result("3", "c\n"),
            call(
                "4",
                "Edit",
                json!({"file_path": "/p/c.py", "old_string": "c", "new_string": "C"}),
            ),
            result("4", "ok"),
            call(
                "5",
                "Read",
                json!({"file_path": "/p/b.py", "offset": 1, "limit": 1}),
            ),
            result("5", "B1"),
            call("6", "Bash", json!({"command": "rm /p/gone.py"})),
            result("6", ""),
            call("7", "Read", json!({"file_path": "/p/d.py"})),
            result("7", "d\n"),
        ];
        // Everything compacted but the last call, whose read shows d.py in the tail.
        let found = candidates(&messages, &(0..12), &OwnSummaries::none());
        assert_eq!(
            found,
            vec![
                ("/p/b.py".to_string(), Some("B1\n".to_string())),
                ("/p/c.py".to_string(), None),
                ("/p/a.py".to_string(), Some("a = 1\nb = 2\n".to_string())),
            ]
        );
    }

    #[test]
    fn a_file_is_cut_to_its_budget_with_a_marker() {
        let text: String = (0..2_000)
            .map(|n| format!("line {n} of the file\n"))
            .collect();
        let (cut, was_cut) = cut_to(&text, 300, Encoding::O200kBase);
        assert!(was_cut);
        assert!(cut.starts_with("line 0 of the file\nline 1 of the file\n"));
        assert!(cut.ends_with("more lines of this file not shown; read it for the rest …]"));
        assert!(tokens::count_text(Encoding::O200kBase, &cut) <= 300 - 24);
        let (whole, was_cut) = cut_to("short\n", 300, Encoding::O200kBase);
        assert_eq!((whole.as_str(), was_cut), ("short\n", false));
    }
}
