//! Step 8, **report**: the post-condition (SPEC §4.7) — the result is below the threshold by the
//! trigger's own estimate, or its error says `STILL_OVER_LIMIT` with the numbers; a list that
//! would not be smaller is never returned (`NOT_SMALLER`, the input stands) — then the
//! statistics, the records beside the archive (metadata, audit line, summaries file), key
//! information extraction and the `completed` / `failed` events. `record` writes those records;
//! `reporter` says the outcome of a step that stops the compaction (the steps before this one
//! report through it).

pub mod custom;
pub mod record;
pub(crate) mod reporter;

use serde_json::Value;

use crate::base::error::{CompactError, ErrorCode};
use crate::carry::memory;
use crate::model::added;
use crate::model::message::{carries_tool_results, role_of, Role};
use crate::options::CompactOptions;
use crate::pipeline::archive::Archived;
use crate::pipeline::report::reporter::{completed_event, Planned, Reporter};
use crate::pipeline::shared::draft::{Draft, Replacement};
use crate::pipeline::shared::outcome::{
    CheckpointReport, CompactOutcome, CompactStats, Piece, RehydratedFile, Transformation,
};
use crate::pipeline::shared::pieces::{pieces_tokens, Assembled, Fitting, Shortened};
use crate::plan::offload::{Offloaded, Scope};
use crate::plan::partition::Partition;
use crate::summary::summarize::Summarizer;

/// What a compaction that went through produced.
pub(crate) struct Compacted<'a> {
    pub draft: Draft,
    pub fitting: Fitting,
    pub assembled: Assembled,
    pub archived: Archived,
    pub planned: Planned,
    pub summarizer: Option<&'a dyn Summarizer>,
    /// The files shown after the summary.
    pub rehydrated: Vec<RehydratedFile>,
}

impl Reporter<'_> {
    /// The outcome of a compaction that went through, checked against the post-condition and
    /// recorded.
    pub fn compacted(&self, done: Compacted<'_>) -> CompactOutcome {
        let Compacted {
            draft,
            fitting,
            assembled,
            archived,
            planned,
            summarizer,
            rehydrated,
        } = done;
        let Assembled {
            pieces,
            sources,
            shortened,
            stripped,
        } = assembled;
        let region = Partition {
            head_len: draft.region.start,
            tail_start: draft.region.end,
        };
        let original = self.original_tokens();
        let compacted = pieces_tokens(self.counts, &pieces, self.options);
        if let Some(error) = self.not_smaller(compacted) {
            // The stand-in paths made the draft look no larger than this; only a path of
            // unusual length gets here, after the archives were written (they stay, recorded).
            return self.failed(error, &planned);
        }
        let estimator = &self.measured.estimator;
        let estimate = estimator.after(compacted);
        let threshold = estimator.threshold();

        let mut warnings = archived.warnings;
        warnings.extend(draft.warnings.iter().cloned());
        let mut outcome = self.skipped(None);
        said_of_replacement(&draft, &pieces, summarizer, &mut outcome, &mut warnings);
        self.changes(&draft, &fitting, &shortened, stripped, &mut outcome);
        if !outcome.offloaded.is_empty() {
            warnings.push(format!(
                "{} oversized text(s) of kept messages were shortened to fit (see offloaded)",
                outcome.offloaded.len()
            ));
        }
        if estimate >= threshold {
            let message = format!(
                "the compacted list is still over the threshold: about {estimate} tokens (from {}), threshold {threshold}; {}{}",
                self.measured.measure.tokens,
                self.largest_kept(&pieces, &sources, &fitting),
                self.cannot_fit_reason(&fitting)
            );
            tracing::warn!("{message}");
            warnings.push(message.clone());
            outcome.error = Some(
                CompactError::new(ErrorCode::StillOverLimit, message).with_numbers(
                    estimate,
                    self.measured.measure.tokens,
                    threshold,
                ),
            );
        }

        outcome.compacted = true;
        outcome.rehydrated = rehydrated;
        outcome.stats = CompactStats {
            original_token_count: original,
            compacted_token_count: compacted,
            compaction_ratio: if original == 0 {
                0.0
            } else {
                compacted as f64 / original as f64
            },
            ..CompactStats::default()
        };
        // Counted on this list, one a message; a list in another format is counted again in
        // its items (`formats::Input::outcome`). A message changed in place is still retained.
        outcome.stats.set_message_counts(
            &vec![1; self.messages.len()],
            draft.region.clone(),
            sources.iter().flatten().map(|&index| (index, 1)),
        );
        outcome.pieces = pieces;
        outcome.piece_sources = sources;
        outcome.archive_path = archived.region;
        outcome.offload_archive_path = archived.offload;
        outcome.thinking_archive_path = archived.thinking;
        outcome.warnings = warnings;
        outcome.partition = Some(region);
        outcome.strategy = planned.strategy;
        outcome.fallback = planned.fallback;
        outcome.trigger = self.measured.trigger;
        outcome.measure = Some(self.measured.measure);
        if matches!(
            draft.replacement,
            Replacement::Summary(_) | Replacement::Native(_)
        ) {
            let compacted = &self.messages[draft.region.clone()];
            let ledger = crate::carry::ledger::Ledger::of_region(
                compacted,
                crate::carry::appended::earlier_body(compacted, &draft.own),
            );
            outcome.full_ledger = (!ledger.is_empty()).then(|| ledger.render());
        }
        record::record_outcome(self.options, &mut outcome);
        // A reused checkpoint's messages too: what was extracted from them before is not
        // appended again, and a session that did not extract then gets it now.
        if self.options.extract_memory {
            self.extract_memory(&mut outcome);
        }
        self.hooks.event(completed_event(&outcome));
        outcome.warnings.extend(self.notes.iter().cloned());
        outcome
    }

    /// The kept messages the compaction changed: the texts the fit step shortened
    /// (`offloaded`), and the thinking the thinking policy removed (`transformations`).
    fn changes(
        &self,
        draft: &Draft,
        fitting: &Fitting,
        shortened: &[Shortened],
        stripped: Vec<(usize, Option<usize>)>,
        outcome: &mut CompactOutcome,
    ) {
        for ((index, cuts), (_, position, counts)) in fitting.cuts.iter().zip(shortened) {
            for ((site, _), tokens) in cuts.iter().zip(counts) {
                outcome.offloaded.push(Offloaded {
                    index: *position,
                    original_index: *index,
                    path: site.path_at(*position),
                    original_tokens: site.tokens,
                    tokens: *tokens,
                    kind: if site.tool_result {
                        "tool_result"
                    } else {
                        "text"
                    },
                });
            }
        }
        for (index, position) in stripped {
            let Some(change) = draft.stripped.iter().find(|s| s.index == index) else {
                continue;
            };
            let content = self.messages[index].get("content");
            for &block in &change.removed {
                outcome.transformations.push(Transformation {
                    kind: "thinking_dropped",
                    path: format!("messages.{index}.content.{block}"),
                    original_index: index,
                    index: position,
                    block_type: content
                        .and_then(|c| c.get(block))
                        .map(|b| crate::model::message::block_type(b).to_string())
                        .unwrap_or_default(),
                });
            }
        }
    }

    /// The message that keeps a result over the threshold, for its error message: the largest
    /// one of the result, by its index and role in the input (or as the summary), its size, and
    /// the option that would shorten it. Empty when the result has no message.
    fn largest_kept(
        &self,
        pieces: &[Piece],
        sources: &[Option<usize>],
        fitting: &Fitting,
    ) -> String {
        let encoding = self.options.encoding;
        let Some((position, tokens)) = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Original(i) => self.counts[*i],
                Piece::New(message) => crate::model::tokens::count_message(encoding, message),
            })
            .enumerate()
            .max_by_key(|&(position, tokens)| (tokens, std::cmp::Reverse(position)))
        else {
            return String::new();
        };
        let message = match &pieces[position] {
            Piece::Original(i) => &self.messages[*i],
            Piece::New(message) => message,
        };
        let Some(index) = sources.get(position).copied().flatten() else {
            return format!(
                "the largest message is the summary the library wrote (message {position} of the result, {tokens} tokens): lower userMessagesMaxTokens, planMaxTokens or summaryMaxTokens, or use a model with a larger window. "
            );
        };
        let role = role_of(message).map_or("unknown", Role::as_str);
        let shortened = fitting.cuts.iter().any(|(i, _)| *i == index);
        let tool = carries_tool_results(message);
        let help = match self.options.offload {
            _ if role_of(message).is_some_and(Role::is_system) => {
                "a system prompt is never shortened; shorten it, or use a model with a larger window"
            }
            _ if shortened => {
                "it was shortened as far as offload allows; lower tailRetentionRatio or start a new conversation"
            }
            Scope::Off if tool => "offload: 'tool-results' would shorten it (the original stays in the archive)",
            Scope::Off | Scope::ToolResults if !tool => {
                "offload: 'all' would shorten its text (the original stays in the archive)"
            }
            _ => "it holds nothing offload can shorten (tool-call inputs, images, system text); lower tailRetentionRatio or start a new conversation",
        };
        format!(
            "message {index} ({role}, {tokens} tokens; at {position} in the result) keeps it over: {help}. "
        )
    }

    /// Why a result could not be brought under the threshold, for its error message.
    fn cannot_fit_reason(&self, fitting: &Fitting) -> String {
        match self.options.offload {
            crate::plan::offload::Scope::Off => {
                "shortening oversized kept messages is turned off (offload: 'off')".to_string()
            }
            _ if fitting.cuts.is_empty() => format!(
                "what is kept (system prompt, summary, recent messages) cannot be shortened further with offload: '{}' (oversized user or assistant text is only shortened with offload: 'all')",
                self.options.offload.as_str()
            ),
            _ => "the oversized tool results were shortened as far as they can be; what else is kept (system prompt, summary, user or assistant text) is still too large".to_string(),
        }
    }

    /// SanBot's key-information extraction over the input messages the compaction replaced.
    fn extract_memory(&self, outcome: &mut CompactOutcome) {
        extract_memory_into(self.messages, self.options, outcome);
    }
}

/// What the message standing for the region says in the outcome: the summary and who wrote it
/// (our summary, Anthropic's compaction, a reused checkpoint) or what a strategy without a
/// summary removed, and their warnings.
fn said_of_replacement(
    draft: &Draft,
    pieces: &[Piece],
    summarizer: Option<&dyn Summarizer>,
    outcome: &mut CompactOutcome,
    warnings: &mut Vec<String>,
) {
    if let Replacement::Summary(summary) = &draft.replacement {
        warnings.extend(summary.warnings.iter().cloned());
        outcome.summary = pieces
            .get(draft.region.start)
            .and_then(|piece| match piece {
                Piece::New(message) => message
                    .get("content")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                Piece::Original(_) => None,
            });
        outcome.attempts = summary.attempts;
        outcome.rounds = summary.rounds;
        outcome.summary_usage = summary.usage;
        outcome.summary_model_learnt = summary.learnt.clone();
        outcome.summary_request = Some(summary.request);
        outcome.summary_fallback = summary.fallback.clone();
    }
    if let Replacement::Rewrite(rewrite) = &draft.replacement {
        outcome.removed = Some(rewrite.removal.clone());
    }
    if let Replacement::Checkpoint(checkpoint) = &draft.replacement {
        // Said as the compaction that recorded it said it.
        outcome.summary = pieces
            .get(draft.region.start)
            .and_then(|piece| match piece {
                Piece::New(message) => Some(message),
                Piece::Original(_) => None,
            })
            .and_then(|message| {
                let text = added::summary_text(message)?;
                Some(match added::native_summary(message) {
                    Some(native) => format!("{}\n\n{text}", native.trim()),
                    None => text.to_string(),
                })
            });
        outcome.checkpoint = Some(CheckpointReport {
            reused: true,
            extended: false,
            covered_messages: checkpoint.covered_messages,
            archive_path: checkpoint.archive_path.clone(),
            recorded: false,
        });
        // A checkpoint found in the location is the caller's to keep from now on.
        outcome.checkpoint_record = Some((**checkpoint).clone());
    }
    if let Some(summarizer) = summarizer {
        outcome.provider = Some(summarizer.provider().to_string());
        outcome.model = summarizer.model().map(str::to_string);
        // The zero-configuration fallback: said in the result, not only in a log line.
        if let Some(notice) = summarizer.notice() {
            warnings.push(notice.to_string());
        }
    }
    if let Replacement::Native(native) = &draft.replacement {
        let beside = pieces
            .get(draft.region.start)
            .and_then(|piece| match piece {
                Piece::New(message) => added::summary_text(message),
                Piece::Original(_) => None,
            });
        outcome.summary = Some(format!(
            "{}\n\n{}",
            native
                .block
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim(),
            beside.unwrap_or("")
        ));
        outcome.provider = Some("anthropic-compaction".to_string());
        outcome.model = Some(native.model.clone());
        outcome.attempts = native.attempts;
        outcome.rounds = 1;
    }
    if let Some(fallback) = &draft.native_fallback {
        warnings.push(fallback.warning.clone());
        outcome.native_unavailable = fallback.unavailable_model.clone();
    }
}

/// The records of a compaction made outside the pipeline (a custom JS strategy): the audit line
/// and, with `extractMemory`, the key information of the `removed` messages. `outcome` carries
/// what is recorded (archive, statistics, tokens, threshold, warnings); problems writing become
/// its warnings.
pub fn record_external(options: &CompactOptions, removed: &[Value], outcome: &mut CompactOutcome) {
    record::record_outcome_as(options, outcome, "custom");
    if outcome.compacted && options.extract_memory {
        let pieces = std::mem::take(&mut outcome.pieces);
        extract_memory_into(removed, options, outcome);
        outcome.pieces = pieces;
    }
}

/// Extracts key information from the `messages` not kept in `outcome.pieces`.
fn extract_memory_into(messages: &[Value], options: &CompactOptions, outcome: &mut CompactOutcome) {
    let mut kept = vec![false; messages.len()];
    for piece in &outcome.pieces {
        if let Piece::Original(i) = piece {
            kept[*i] = true;
        }
    }
    let gone: Vec<Value> = messages
        .iter()
        .zip(&kept)
        .filter(|(_, kept)| !**kept)
        .map(|(m, _)| m.clone())
        .collect();
    let found = memory::extract(&gone);
    match crate::archive::memory::write_in(
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        &found,
    ) {
        Ok(extracted) => outcome.extracted = Some(extracted),
        Err(e) => {
            let message = format!("could not write the extracted memory: {e}");
            tracing::warn!("{message}");
            outcome.warnings.push(message);
        }
    }
}
