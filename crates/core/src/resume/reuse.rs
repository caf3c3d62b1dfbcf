//! Which recorded checkpoint may stand for the start of a list: the caller's own (in memory)
//! or one found in the session's location, covering the longest prefix.
//!
//! **Checked before reuse** (SPEC §11). A checkpoint found in the location is only a file someone
//! could have planted: it is reused when its message has the shape the library writes
//! ([`shape_problem`]), it belongs to the session (recorded for this session id, and the
//! metadata of its archive names its message), and it was written with this call's summarizer
//! configuration ([`summarizer_config`]). Anything else is set aside: a warning in the result,
//! a `checkpoint_ignored` line in the audit log, and the compaction runs as without it.

use std::sync::Arc;

use serde_json::json;

use crate::archive::checkpoint::{
    self as store, Checkpoint, PrefixHashes, SummarizerConfig, CHECKPOINT_VERSION,
};
use crate::model::added;
use crate::options::CompactOptions;
use crate::summary::summarize::Summarizer;

/// The checkpoint covering the longest prefix of the list that may be reused: the caller's own
/// (in memory) or one recorded in the session's location, checked (see the module docs). Also
/// what was set aside, each as a warning, each recorded in the audit log
/// (`checkpoint_ignored`). A location that cannot be read is no checkpoint (logged): the
/// compaction runs as without one.
pub(crate) fn find(
    hashes: &PrefixHashes,
    format: &str,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
) -> (Option<Arc<Checkpoint>>, Vec<String>) {
    let config = summarizer_config(options, summarizer);
    let mut ignored: Vec<String> = Vec::new();
    // The caller's own: recorded by this process for this session (checked all the same: its
    // options may have changed since).
    let mut best: Option<Arc<Checkpoint>> = options
        .known_checkpoints
        .iter()
        .filter(|c| c.covers_start_of(hashes, format) && fits(c, options, &config).is_ok())
        .max_by_key(|c| c.covered_messages)
        .cloned();
    match store::find_in(
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        hashes,
        format,
    ) {
        Ok(found) => {
            let mut reasons = found.ignored;
            for checkpoint in found.checkpoints {
                if best
                    .as_ref()
                    .is_some_and(|b| b.covered_messages >= checkpoint.covered_messages)
                {
                    break;
                }
                let name = format!("checkpoint-{}.json", checkpoint.prefix);
                match fits(&checkpoint, options, &config)
                    .and_then(|()| recorded(&checkpoint, options))
                {
                    Ok(()) => {
                        best = Some(Arc::new(checkpoint));
                        break;
                    }
                    Err(why) => reasons.push(format!("{name}: {why}")),
                }
            }
            for reason in reasons {
                let warning = format!("a checkpoint was not reused: {reason}");
                tracing::debug!("{warning}");
                let mut fields = serde_json::Map::new();
                fields.insert("reason".into(), json!(reason));
                if let Err(e) = crate::archive::Records::new(
                    &options.output_dir,
                    options.archive_store.as_deref(),
                    &options.session_id,
                )
                .event("checkpoint_ignored", fields)
                {
                    tracing::debug!("could not record the ignored checkpoint: {e}");
                }
                ignored.push(warning);
            }
        }
        Err(e) => tracing::debug!("could not read the session's checkpoints: {e}"),
    }
    (best, ignored)
}

/// The summarizer configuration of this call, as a checkpoint records it: the provider and
/// model, and a fingerprint of the instructions the library sends (prompt style, custom
/// instructions, the library's prompt itself), of the request's configuration and of the
/// sections appended after the summary.
pub(crate) fn summarizer_config(
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
) -> SummarizerConfig {
    use crate::options::{PromptStyle, SummaryRequestMode};
    use crate::summary::prompt;
    let instructions = match options.prompt_style {
        PromptStyle::Structured => {
            prompt::instructions(None, options.custom_instructions.as_deref())
        }
        PromptStyle::Continuation => {
            prompt::continuation_instructions(options.custom_instructions.as_deref())
        }
    };
    let request = json!({
        "instructions": instructions,
        "summaryRequest": match options.summary_request {
            SummaryRequestMode::Auto => "auto",
            SummaryRequestMode::Shared => "shared",
            SummaryRequestMode::Transcript => "transcript",
        },
        "agentRequest": options.agent_request.as_ref().map(|body| body.get("model").cloned()),
        "native": options.native_compaction.as_ref().map(|client| client.model().to_string()),
        "summaryMaxChars": options.summary_max_chars,
        // The sections the library appends after the model's text are part of the message a
        // checkpoint holds: one written for other plan tools or budgets is not this call's.
        "planTools": options.plan_tools,
        "planMaxTokens": options.plan_max_tokens,
        "latestFailureMaxTokens": options.latest_failure_max_tokens,
        "summaryBudgetTokens": options.summary_budget().total,
    });
    let digest = ring::digest::digest(&ring::digest::SHA256, request.to_string().as_bytes());
    SummarizerConfig {
        provider: summarizer.provider().to_string(),
        model: summarizer.model().map(str::to_string),
        fingerprint: digest.as_ref().iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// Whether a checkpoint may stand for its prefix in this call: of this session, written with
/// this summarizer configuration, its message of the library's shape. `Err`: why not.
fn fits(
    checkpoint: &Checkpoint,
    options: &CompactOptions,
    config: &SummarizerConfig,
) -> Result<(), String> {
    if checkpoint.version != CHECKPOINT_VERSION {
        return Err(format!("it is of version {}", checkpoint.version));
    }
    if checkpoint.session_id != options.session_id {
        return Err(format!(
            "it was recorded for the session {:?}, not this one",
            crate::base::text::clip(&checkpoint.session_id, 40)
        ));
    }
    if checkpoint.summarizer != *config {
        return Err(
            "it was written with another summarizer configuration (provider, model, instructions or request)"
                .into(),
        );
    }
    if checkpoint.head_length >= checkpoint.covered_messages {
        return Err("it covers no message after its head".into());
    }
    match shape_problem(checkpoint) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The most characters a checkpoint's summary text may hold (its sections are bounded by token
/// budgets; a few hundred thousand characters is already far more than any summary).
const MAX_SUMMARY_CHARS: usize = 2_000_000;

/// What is wrong with the shape of a checkpoint's message, if anything: it must be a summary
/// of the library's form (not a notice) naming the checkpoint's archive on its first line, of
/// bounded size, without a thinking line (checkpoints keep none), whose model text is as the cut
/// leaves it (nothing in it looks like a section header, an entry header, a `Recall:` line or
/// the marker) and whose recall lines are of the library's form.
fn shape_problem(checkpoint: &Checkpoint) -> Option<String> {
    let message = &checkpoint.message;
    let Some(text) = added::summary_text(message) else {
        return Some("its message is not a summary of this library".into());
    };
    if added::is_notice(message) {
        return Some("its message is a notice, not a summary".into());
    }
    if text.chars().count() > MAX_SUMMARY_CHARS {
        return Some(format!(
            "its summary is longer than {MAX_SUMMARY_CHARS} characters"
        ));
    }
    let named = added::summary_archive(message)
        .map(|path| path.rsplit(['/', '\\']).next().unwrap_or(path).trim());
    if named.is_none() || named != checkpoint.archive_name() {
        return Some("its summary does not name the checkpoint's archive".into());
    }
    if added::thinking_line(message).is_some() {
        return Some("its summary ends with a thinking line".into());
    }
    let body = added::summary_body(message).unwrap_or("");
    let model_text = match crate::carry::sections::first_section(body) {
        Some(at) => &body[..at],
        None => body,
    };
    if crate::carry::sections::strip_sections(model_text) != model_text.trim() {
        return Some(
            "its summary holds text that looks like the library's own lines (a section header, an entry header, a recall line or the marker)"
                .into(),
        );
    }
    let sections = crate::carry::sections::split(body);
    if let Some(recall) = sections.recall {
        if recall
            .lines()
            .filter(|line| line.starts_with(crate::carry::sections::RECALL_LINE))
            .any(|line| crate::carry::sections::parse_recall_line(line).is_none())
        {
            return Some("its recall section holds a line not of the library's form".into());
        }
    }
    None
}

/// Whether the session's records name the checkpoint's message: the metadata of its archive
/// records that message as the one that stood for it (a planted checkpoint cannot make a
/// message the library's).
fn recorded(checkpoint: &Checkpoint, options: &CompactOptions) -> Result<(), String> {
    let own = crate::archive::provenance::own_summaries(
        std::slice::from_ref(&checkpoint.message),
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        &[],
    );
    if own.contains(&checkpoint.message) {
        Ok(())
    } else {
        Err("the metadata of its archive does not name its summary".into())
    }
}
