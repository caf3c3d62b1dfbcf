//! Archives, their metadata and audit log, and the history functions (list, restore, prune),
//! driven through the real pipeline (`compact::compact` with the extractive summarizer).

use std::fs;
use std::path::Path;

use context_compact_core::archive::{
    self, list_archives, prune_archives, restore_messages, HistoryError, PruneOptions, Restored,
};
use context_compact_core::base::error::ErrorCode;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, Retry, Summarizer, SummaryRequest,
};
mod common;
use common::{assembled, other_warnings, run, run_with, thinking_turns};
use context_compact_core::model::added;
use serde_json::{json, Value};

/// A conversation with tool calls, unknown fields, odd key order, big numbers and emoji.
fn turns(from: usize, count: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for i in from..from + count {
        out.push(json!({"role": "user", "z_last_key_first": i, "content": format!("question {i}: please look at src/file{i}.rs 🦀 {}", "word ".repeat(30))}));
        out.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("reading file {i}")},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {"path": format!("src/file{i}.rs"), "n": 12345678901234567890u64, "f": -0.5}}
        ]}));
        out.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("fn f{i}() {{}} {}", "x ".repeat(40)), "extra": {"b": 1, "a": 2}}
        ]}));
        out.push(json!({"role": "assistant", "content": format!("answer {i} 😀 {}", "word ".repeat(30)), "metadata": {"big": 1e21}}));
    }
    out
}

fn conversation() -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": "You are a careful agent."})];
    messages.extend(turns(0, 8));
    messages
}

fn options(dir: &Path) -> CompactOptions {
    CompactOptions {
        context_token_limit: 2_000,
        tail_retention_ratio: 0.1,
        force: true,
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        ..CompactOptions::default()
    }
}

fn rebuilt(messages: &[Value], restored: Vec<Restored>) -> Vec<Value> {
    restored
        .into_iter()
        .map(|r| match r {
            Restored::Original(i) => messages[i].clone(),
            Restored::Archived(message) => message,
        })
        .collect()
}

/// Equal including key order (serde_json's `preserve_order` map compares as a map, so compare
/// the serialized text as well).
fn assert_identical(actual: &[Value], expected: &[Value]) {
    assert_eq!(actual.len(), expected.len());
    assert_eq!(
        serde_json::to_string(actual).unwrap(),
        serde_json::to_string(expected).unwrap()
    );
}

fn events(dir: &Path) -> Vec<Value> {
    fs::read_to_string(dir.join(archive::EVENTS_FILE))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn mode(path: &Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0o600
    }
}

fn is_user_messages_warning(warning: &str) -> bool {
    warning.starts_with("the summary's section of the user's messages")
}

#[test]
fn a_compaction_writes_metadata_an_audit_line_and_the_cumulative_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let messages = conversation();
    let outcome = run(&messages, &options(tmp.path()));
    assert!(outcome.compacted, "{outcome:?}");
    assert!(
        other_warnings(&outcome).is_empty(),
        "{:?}",
        outcome.warnings
    );
    let archive_path = outcome.archive_path.clone().unwrap();
    let name = archive_path.file_name().unwrap().to_str().unwrap();
    let session = tmp.path().join("s");

    let meta_path = session.join(archive::meta_name_for(name).unwrap());
    let meta: Value = serde_json::from_str(&fs::read_to_string(&meta_path).unwrap()).unwrap();
    let plan = outcome.partition.unwrap();
    assert_eq!(meta["sessionId"], "s");
    assert_eq!(meta["sequence"], 1);
    assert_eq!(meta["archive"], name);
    assert_eq!(meta["provider"], "extractive");
    assert_eq!(meta["headCount"], 1);
    assert_eq!(meta["middleCount"], plan.middle_len());
    assert_eq!(meta["tailCount"], messages.len() - plan.tail_start);
    assert_eq!(
        meta["middle"],
        json!({"start": plan.head_len, "end": plan.tail_start})
    );
    assert_eq!(meta["stats"]["compactedMessageCount"], plan.middle_len());
    assert_eq!(meta["summary"].as_str(), outcome.summary.as_deref());
    let (timestamp, _) = archive::parse_archive_name(name).unwrap();
    assert_eq!(
        meta["createdAt"].as_str(),
        archive::timestamp_to_rfc3339(timestamp).as_deref()
    );
    assert_eq!(mode(&meta_path), 0o600);

    let log = events(&session);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["event"], "compacted");
    assert_eq!(log[0]["archive"], name);
    assert_eq!(log[0]["sequence"], 1);
    assert_eq!(log[0]["tokens"], outcome.trigger_tokens);
    assert!(log[0]["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(mode(&session.join(archive::EVENTS_FILE)), 0o600);

    let summaries = fs::read_to_string(session.join(archive::SUMMARIES_FILE)).unwrap();
    assert!(summaries.starts_with(&format!(
        "## {} — {name}\n\n",
        meta["createdAt"].as_str().unwrap()
    )));
    let message = json!({"role": "user", "content": outcome.summary});
    let body = added::summary_body(&message).unwrap().trim();
    assert!(summaries.contains(body));
    assert_eq!(mode(&session.join(archive::SUMMARIES_FILE)), 0o600);

    // A second compaction (after the conversation went on) appends (never rewrites) both files.
    let mut grown = assembled(&messages, &outcome);
    grown.extend(turns(8, 8));
    let again = run(&grown, &options(tmp.path()));
    assert!(again.compacted);
    assert_eq!(events(&session).len(), 2);
    let summaries = fs::read_to_string(session.join(archive::SUMMARIES_FILE)).unwrap();
    let headings = summaries
        .lines()
        .filter(|l| l.starts_with("## ") && l.contains(" — compact-"))
        .count();
    assert_eq!(headings, 2, "{summaries}");
}

#[test]
fn below_the_threshold_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(tmp.path());
    opts.force = false;
    opts.context_token_limit = 1_000_000;
    let outcome = run(&conversation(), &opts);
    assert!(!outcome.compacted);
    assert!(!tmp.path().join("s").exists());
}

struct Failing;

impl Summarizer for Failing {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        Box::pin(async {
            Err(AttemptError::new(
                ErrorCode::BadRequest,
                "HTTP 400",
                Retry::No,
            ))
        })
    }
    fn provider(&self) -> &str {
        "custom"
    }
}

#[test]
fn failed_and_skipped_attempts_are_audited_with_their_code() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let mut opts = options(tmp.path());
    opts.max_retries = 0;
    let outcome = run_with(&conversation(), &opts, &Failing);
    assert!(!outcome.compacted);
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::BadRequest);
    // Nothing between head and tail: the tail budget holds everything.
    opts.tail_retention_ratio = 1.0;
    opts.context_token_limit = 1_000_000;
    let outcome = run(&conversation(), &opts);
    assert_eq!(
        outcome.error.as_ref().unwrap().code,
        ErrorCode::NothingToCompact
    );
    let log = events(&session);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["event"], "failed");
    assert_eq!(log[0]["code"], "BAD_REQUEST");
    assert!(log[0]["reason"].as_str().unwrap().contains("400"));
    assert_eq!(log[1]["event"], "skipped");
    assert_eq!(log[1]["code"], "NOTHING_TO_COMPACT");
    // No archive, no metadata.
    assert!(list_archives(tmp.path(), "s").unwrap().is_empty());
    assert!(!session.join(archive::SUMMARIES_FILE).exists());
}

#[test]
fn listing_is_by_sequence_and_ignores_everything_that_is_not_an_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let mut messages = conversation();
    for round in 0..3 {
        let outcome = run(&messages, &options(tmp.path()));
        assert!(outcome.compacted);
        messages = assembled(&messages, &outcome);
        messages.extend(turns(100 + round * 10, 4));
    }
    let session = tmp.path().join("s");
    fs::write(session.join(".tmp-leftover"), "[").unwrap();
    fs::write(session.join("notes.md"), "x").unwrap();
    fs::write(session.join("compact-20260101T000000Z-x.json"), "[]").unwrap();
    fs::create_dir(session.join("compact-20260101T000000Z-99.json")).unwrap();
    // A corrupt metadata file for the second archive, a missing one for the third.
    let list = list_archives(tmp.path(), "s").unwrap();
    assert_eq!(list.len(), 3);
    fs::write(list[1].meta_path.as_ref().unwrap(), "{not json").unwrap();
    fs::remove_file(list[2].meta_path.as_ref().unwrap()).unwrap();

    let list = list_archives(tmp.path(), "s").unwrap();
    assert_eq!(
        list.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    for info in &list {
        let text = fs::read_to_string(&info.path).unwrap();
        assert_eq!(info.size_bytes, text.len() as u64);
        let parsed: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(info.message_count, Some(parsed.len()));
        assert!(info.file_name.starts_with("compact-") && info.path.ends_with(&info.file_name));
        assert_eq!(
            Some(info.created_at.clone()),
            archive::timestamp_to_rfc3339(&info.timestamp)
        );
    }
    assert!(list[0].meta_path.is_some());
    assert!(list[0]
        .summary
        .as_deref()
        .unwrap()
        .starts_with(added::SUMMARY_PREFIX));
    assert_eq!(
        (list[1].meta_path.as_ref(), list[1].summary.as_ref()),
        (None, None)
    );
    assert_eq!(
        (list[2].meta_path.as_ref(), list[2].summary.as_ref()),
        (None, None)
    );

    assert!(list_archives(tmp.path(), "nobody").unwrap().is_empty());
    assert!(matches!(
        list_archives(tmp.path(), "../etc"),
        Err(HistoryError::Invalid(_))
    ));
}

#[test]
fn restore_after_one_compaction_equals_the_original() {
    let tmp = tempfile::tempdir().unwrap();
    let original = conversation();
    let outcome = run(&original, &options(tmp.path()));
    assert!(outcome.compacted);
    let compacted = assembled(&original, &outcome);
    assert!(compacted.len() < original.len());
    let restored = restore_messages(&compacted, tmp.path(), "s").unwrap();
    // Retained messages come back as references to the input, not copies.
    assert!(matches!(restored[0], Restored::Original(0)));
    assert_identical(&rebuilt(&compacted, restored), &original);
}

#[test]
fn restore_after_three_compactions_equals_the_whole_history() {
    let tmp = tempfile::tempdir().unwrap();
    let mut history = conversation();
    let mut current = history.clone();
    for round in 0..3 {
        let outcome = run(&current, &options(tmp.path()));
        assert!(outcome.compacted, "round {round}: {outcome:?}");
        current = assembled(&current, &outcome);
        // The conversation goes on after each compaction.
        let more = turns(100 + round * 10, 3);
        history.extend(more.iter().cloned());
        current.extend(more);
    }
    // The last compaction's middle held the second summary, whose archive holds the first.
    let summaries = current
        .iter()
        .filter(|m| added::is_summary_message(m))
        .count();
    assert_eq!(summaries, 1);
    let restored = restore_messages(&current, tmp.path(), "s").unwrap();
    assert_identical(&rebuilt(&current, restored), &history);
    assert_eq!(list_archives(tmp.path(), "s").unwrap().len(), 3);
}

#[test]
fn restore_resolves_archives_by_file_name_so_a_moved_directory_works() {
    let tmp = tempfile::tempdir().unwrap();
    let mut original = conversation();
    let mut current = original.clone();
    for round in 0..2 {
        let outcome = run(&current, &options(&tmp.path().join("before")));
        assert!(outcome.compacted, "{:?}", outcome.error);
        current = assembled(&current, &outcome);
        // The conversation goes on before the next compaction.
        let more = turns(8 + 8 * round, 8);
        original.extend(more.iter().cloned());
        current.extend(more);
    }
    fs::rename(tmp.path().join("before"), tmp.path().join("after")).unwrap();
    let restored = restore_messages(&current, &tmp.path().join("after"), "s").unwrap();
    assert_identical(&rebuilt(&current, restored), &original);
}

fn summary_naming(path: &str) -> Value {
    json!({"role": "user", "content": added::summary_message_text(3, Some(path), "## Goal\nx")})
}

/// `message`, recorded as the library's in `session` the way a compaction records a summary:
/// the metadata beside the archive it names (or, when it names none that is an archive's, the
/// metadata holding its exact text, as earlier versions wrote it). Restore only ever reads an
/// archive for a summary so recorded.
fn recorded(session: &Path, message: Value) -> Value {
    let text = added::summary_text(&message).unwrap();
    let named = added::summary_archive(&message)
        .map(|p| p.rsplit(['/', '\\']).next().unwrap().trim().to_string())
        .filter(|n| archive::parse_archive_name(n).is_some());
    let (meta_name, meta) = match named {
        Some(name) => (
            archive::meta_name_for(&name).unwrap(),
            json!({"archive": name, "summary": text,
                   "summaryMessageSha256": added::summary_identity_hex(&message).unwrap()}),
        ),
        None => (
            "compact-20000101T000000Z-99.meta.json".to_string(),
            json!({"archive": "compact-20000101T000000Z-99.json", "summary": text}),
        ),
    };
    fs::write(session.join(meta_name), meta.to_string()).unwrap();
    message
}

#[test]
fn restore_refuses_references_outside_the_session_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    // Files a crafted summary might try to reach.
    fs::write(
        tmp.path().join("secret.json"),
        r#"[{"role":"user","content":"secret"}]"#,
    )
    .unwrap();
    fs::write(session.join("events.jsonl"), "").unwrap();
    for reference in [
        "../secret.json",
        "/etc/passwd",
        "..\\..\\secret.json",
        "compact-20260101T000000Z-1.json/../../secret.json",
        "events.jsonl",
        "..",
        "",
    ] {
        // Without a record it is the caller's message: nothing is read for it.
        let messages = vec![summary_naming(reference)];
        assert_eq!(
            restore_messages(&messages, tmp.path(), "s").unwrap(),
            vec![Restored::Original(0)],
            "{reference:?}"
        );
        // Recorded as the library's, its reference is still refused.
        let messages = vec![recorded(&session, summary_naming(reference))];
        match restore_messages(&messages, tmp.path(), "s") {
            Err(HistoryError::InvalidReference(message)) => {
                assert!(message.contains("refusing"), "{message}")
            }
            other => panic!("{reference:?}: {other:?}"),
        }
    }
    // An archive-shaped name is only ever looked up inside the session directory.
    let messages = vec![recorded(
        &session,
        summary_naming("/etc/compact-20260101T000000Z-1.json"),
    )];
    let error = restore_messages(&messages, tmp.path(), "s").unwrap_err();
    assert_eq!(error.code(), "ARCHIVE_NOT_FOUND");
    assert!(error
        .to_string()
        .contains("compact-20260101T000000Z-1.json"));
}

#[cfg(unix)]
#[test]
fn restore_does_not_follow_a_symlink_at_an_archive_name() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    let outside = tmp.path().join("outside.json");
    fs::write(&outside, r#"[{"role":"user","content":"outside"}]"#).unwrap();
    let name = "compact-20260101T000000Z-1.json";
    std::os::unix::fs::symlink(&outside, session.join(name)).unwrap();
    let summary = recorded(&session, summary_naming(name));
    let error = restore_messages(&[summary], tmp.path(), "s").unwrap_err();
    assert_eq!(error.code(), "INVALID_ARCHIVE", "{error}");
    // Nor is it listed.
    assert!(list_archives(tmp.path(), "s").unwrap().is_empty());
}

#[test]
fn restore_fails_clearly_on_missing_corrupt_and_cyclic_archives() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    let error = restore_messages(
        &[recorded(
            &session,
            summary_naming("./.context-compact/s/compact-20260101T000000Z-7.json"),
        )],
        tmp.path(),
        "s",
    )
    .unwrap_err();
    assert!(
        matches!(error, HistoryError::ArchiveNotFound(_)),
        "{error:?}"
    );

    archive::write_new_file(&session, "compact-20260101T000000Z-2.json", b"{\"a\":1}").unwrap();
    let error = restore_messages(
        &[recorded(
            &session,
            summary_naming("compact-20260101T000000Z-2.json"),
        )],
        tmp.path(),
        "s",
    )
    .unwrap_err();
    assert_eq!(error.code(), "INVALID_ARCHIVE");

    // Two archives that name each other.
    let a = "compact-20260101T000000Z-3.json";
    let b = "compact-20260101T000000Z-4.json";
    archive::write_new_file(
        &session,
        a,
        serde_json::to_string(&[summary_naming(b)])
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    archive::write_new_file(
        &session,
        b,
        serde_json::to_string(&[summary_naming(a)])
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    recorded(&session, summary_naming(b));
    let error =
        restore_messages(&[recorded(&session, summary_naming(a))], tmp.path(), "s").unwrap_err();
    assert_eq!(error.code(), "INVALID_ARCHIVE");
    assert!(error.to_string().contains("name each other"), "{error}");

    // A summary whose originals were never archived: no record names it, so it stays as it is
    // (there is nothing to restore it from).
    let unarchived =
        json!({"role": "user", "content": added::summary_message_text(3, None, "## Goal\nx")});
    assert_eq!(
        restore_messages(&[unarchived], tmp.path(), "s").unwrap(),
        vec![Restored::Original(0)]
    );

    // Messages without summaries come back as they are.
    let plain = turns(0, 2);
    let restored = restore_messages(&plain, tmp.path(), "s").unwrap();
    assert_eq!(
        restored,
        (0..plain.len()).map(Restored::Original).collect::<Vec<_>>()
    );
}

#[test]
fn restore_finds_the_archive_through_its_metadata_when_the_summary_names_none() {
    let tmp = tempfile::tempdir().unwrap();
    let original = conversation();
    let outcome = run(&original, &options(tmp.path()));
    let compacted = assembled(&original, &outcome);
    let archive_name = outcome
        .archive_path
        .as_ref()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    // Rewrite the metadata's summary to a version of the message that names no archive (as a
    // framework that edited the first line would leave it).
    let index = compacted
        .iter()
        .position(added::is_summary_message)
        .unwrap();
    let body = added::summary_body(&compacted[index]).unwrap().to_string();
    let edited = added::summary_message_text(outcome.stats.compacted_message_count, None, &body);
    let meta_path = tmp
        .path()
        .join("s")
        .join(archive::meta_name_for(&archive_name).unwrap());
    let mut meta: Value = serde_json::from_str(&fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["summary"] = json!(edited);
    fs::write(&meta_path, serde_json::to_string(&meta).unwrap()).unwrap();
    let mut messages = compacted.clone();
    messages[index] = json!({"role": "user", "content": edited});
    let restored = restore_messages(&messages, tmp.path(), "s").unwrap();
    assert_identical(&rebuilt(&messages, restored), &original);
}

#[test]
fn prune_removes_only_old_archives_and_never_the_audit_log_or_memory_files() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    let other = tmp.path().join("other");
    // Recent archives through the pipeline (with metadata, events, summaries).
    let outcome = run(&conversation(), &options(tmp.path()));
    assert!(outcome.compacted);
    // Old ones, written directly with old timestamps in their names.
    for (dir, name) in [
        (&session, "compact-20200101T000000Z-1.json"),
        (&session, "compact-20200101T000000Z-1.meta.json"),
        (&session, "compact-20200102T000000Z-2.json"),
        (&other, "compact-20200101T000000Z-1.json"),
    ] {
        archive::create_private_dir(dir).unwrap();
        archive::write_new_file(dir, name, b"[]").unwrap();
    }
    for keep in ["decisions.md", "facts.md"] {
        fs::write(session.join(keep), "keep me").unwrap();
    }
    let events_before = fs::read_to_string(session.join(archive::EVENTS_FILE)).unwrap();
    let summaries_before = fs::read_to_string(session.join(archive::SUMMARIES_FILE)).unwrap();

    // One session only.
    let report = prune_archives(
        tmp.path(),
        &PruneOptions {
            older_than_days: 7.0,
            session_id: Some("other".into()),
        },
    )
    .unwrap();
    assert_eq!(report.removed.len(), 1);
    assert_eq!(report.kept, 0);
    assert!(session.join("compact-20200101T000000Z-1.json").exists());

    // Every session.
    let report = prune_archives(tmp.path(), &PruneOptions::default()).unwrap();
    let mut removed: Vec<String> = report
        .removed
        .iter()
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    removed.sort();
    assert_eq!(
        removed,
        vec![
            "compact-20200101T000000Z-1.json",
            "compact-20200101T000000Z-1.meta.json",
            "compact-20200102T000000Z-2.json"
        ]
    );
    assert_eq!(report.kept, 1);
    let left = list_archives(tmp.path(), "s").unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(
        Some(left[0].path.as_str()),
        outcome.archive_path.as_ref().and_then(|p| p.to_str())
    );
    assert!(left[0].meta_path.is_some());
    for keep in ["decisions.md", "facts.md"] {
        assert_eq!(fs::read_to_string(session.join(keep)).unwrap(), "keep me");
    }
    assert_eq!(
        fs::read_to_string(session.join(archive::SUMMARIES_FILE)).unwrap(),
        summaries_before
    );
    let events_after = fs::read_to_string(session.join(archive::EVENTS_FILE)).unwrap();
    assert!(events_after.starts_with(&events_before), "append-only");
    let last: Value = serde_json::from_str(events_after.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "pruned");
    assert_eq!(last["removed"].as_array().unwrap().len(), 3);

    // Nothing old left: nothing removed, no event.
    let report = prune_archives(tmp.path(), &PruneOptions::default()).unwrap();
    assert!(report.removed.is_empty());
    assert_eq!(
        fs::read_to_string(session.join(archive::EVENTS_FILE)).unwrap(),
        events_after
    );

    assert!(prune_archives(
        tmp.path(),
        &PruneOptions {
            older_than_days: -1.0,
            session_id: None
        }
    )
    .is_err());
    assert!(prune_archives(
        tmp.path(),
        &PruneOptions {
            older_than_days: 7.0,
            session_id: Some("a/b".into())
        }
    )
    .is_err());
    // A missing output directory has nothing to prune.
    assert_eq!(
        prune_archives(&tmp.path().join("missing"), &PruneOptions::default()).unwrap(),
        Default::default()
    );
}

#[test]
fn the_sequence_continues_after_prune_removed_every_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let middle = [json!({"role": "user", "content": "x"})];
    for _ in 0..3 {
        archive::persist_messages(&middle, tmp.path(), "s").unwrap();
    }
    let report = prune_archives(
        tmp.path(),
        &PruneOptions {
            older_than_days: 0.0,
            session_id: None,
        },
    )
    .unwrap();
    // Archives written this second are not older than "now" by their name's timestamp unless
    // the clock moved on; sleep past the second and prune again if needed.
    if report.removed.len() < 3 {
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        prune_archives(
            tmp.path(),
            &PruneOptions {
                older_than_days: 0.0,
                session_id: None,
            },
        )
        .unwrap();
    }
    assert!(list_archives(tmp.path(), "s").unwrap().is_empty());
    let next = archive::persist_messages(&middle, tmp.path(), "s").unwrap();
    assert_eq!(next.sequence, 4);
}

#[cfg(unix)]
#[test]
fn planted_symlinks_at_the_audit_files_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    let victim = tmp.path().join("victim.txt");
    fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, session.join(archive::EVENTS_FILE)).unwrap();
    std::os::unix::fs::symlink(&victim, session.join(archive::SUMMARIES_FILE)).unwrap();
    let outcome = run(&conversation(), &options(tmp.path()));
    // The compaction and its archive stand; the audit writes fail with warnings.
    assert!(outcome.compacted);
    assert!(outcome.archive_path.is_some());
    assert_eq!(other_warnings(&outcome).len(), 2, "{:?}", outcome.warnings);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn an_unwritable_output_dir_degrades_with_one_warning_and_fails_closed_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let mut opts = options(&file.join("under-a-file"));
    let outcome = run(&conversation(), &opts);
    assert!(outcome.compacted);
    assert!(outcome.archive_path.is_none());
    assert_eq!(other_warnings(&outcome).len(), 1, "{:?}", outcome.warnings);
    opts.require_archive = true;
    let outcome = run(&conversation(), &opts);
    assert!(!outcome.compacted);
    assert_eq!(outcome.error.unwrap().code, ErrorCode::ArchiveFailed);
}

#[test]
fn timestamps_convert_and_invalid_ones_are_refused() {
    assert_eq!(
        archive::timestamp_to_rfc3339("20260217T093000Z").as_deref(),
        Some("2026-02-17T09:30:00Z")
    );
    for bad in [
        "20261317T093000Z",
        "20260230T093000Z",
        "20260217T253000Z",
        "2026021xT093000Z",
        "20260217T093000",
    ] {
        assert_eq!(archive::timestamp_to_rfc3339(bad), None, "{bad}");
    }
    assert_eq!(
        archive::parse_meta_name("compact-20260217T093000Z-3.meta.json"),
        Some(("20260217T093000Z", 3))
    );
    assert_eq!(
        archive::parse_archive_name("compact-20260217T093000Z-+3.json"),
        None
    );
    assert_eq!(
        archive::meta_name_for("compact-20260217T093000Z-3.json").as_deref(),
        Some("compact-20260217T093000Z-3.meta.json")
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_planted_at_an_audit_or_archive_name_never_blocks() {
    use std::os::unix::ffi::OsStrExt;
    let mkfifo = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    mkfifo(&session.join(archive::EVENTS_FILE));
    let outcome = run(&conversation(), &options(tmp.path()));
    assert!(outcome.compacted);
    assert_eq!(other_warnings(&outcome).len(), 1, "{:?}", outcome.warnings);

    let name = "compact-20200101T000000Z-9.json";
    mkfifo(&session.join(name));
    let summary = recorded(&session, summary_naming(name));
    let error = restore_messages(&[summary], tmp.path(), "s").unwrap_err();
    assert_eq!(error.code(), "INVALID_ARCHIVE", "{error}");
    assert_eq!(list_archives(tmp.path(), "s").unwrap().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// One sequence number per compaction (issue 20): the originals of the kept messages a
// compaction changed (thinking removed, tool results shortened) are in its one archive.

fn thinking_options(dir: &Path, session: &str) -> CompactOptions {
    CompactOptions {
        context_token_limit: 3_000,
        tail_retention_ratio: 0.3,
        force: true,
        thinking: context_compact_core::plan::thinking::ThinkingPolicy::Strip,
        output_dir: dir.to_path_buf(),
        session_id: session.into(),
        ..CompactOptions::default()
    }
}

fn sequence_of(path: &Path) -> u64 {
    archive::parse_archive_name(path.file_name().unwrap().to_str().unwrap())
        .unwrap()
        .1
}

#[test]
fn a_compaction_that_strips_thinking_and_shortens_takes_one_number() {
    let tmp = tempfile::tempdir().unwrap();
    let options = thinking_options(tmp.path(), "s");
    let mut history = vec![json!({"role": "system", "content": "You are a coding agent."})];
    history.extend(thinking_turns("a", 8, 600));
    let mut current = history.clone();
    for round in 1..=3u64 {
        let outcome = run(&current, &options);
        assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
        assert!(!outcome.transformations.is_empty(), "thinking removed");
        assert!(!outcome.offloaded.is_empty(), "a tool result shortened");
        let path = outcome.archive_path.clone().unwrap();
        assert_eq!(sequence_of(&path), round);
        // The originals of the changed kept messages are in the compaction's one archive.
        assert_eq!(outcome.thinking_archive_path.as_ref(), Some(&path));
        assert_eq!(outcome.offload_archive_path.as_ref(), Some(&path));
        let written: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let plan = outcome.partition.unwrap();
        assert_identical(
            written["messages"].as_array().unwrap(),
            &current[plan.head_len..plan.tail_start],
        );
        let kept = &written["keptOriginals"];
        assert!(kept["thinkingRemoved"]
            .as_array()
            .is_some_and(|a| !a.is_empty()));
        assert_eq!(
            kept["shortened"].as_array().map(Vec::len),
            Some(outcome.offloaded.len())
        );
        // The summary's thinking line and the shortened result's marker name that archive.
        let result = assembled(&current, &outcome);
        let text = serde_json::to_string(&result).unwrap();
        let shown = path.display().to_string();
        assert!(text.contains(&format!(
            "Originals: keptOriginals.thinkingRemoved of {shown}]"
        )));
        assert!(text.contains(&format!(
            "The full original is keptOriginals.shortened[0] of the archive {shown} …]"
        )));
        current = result;
        let more = thinking_turns(&format!("r{round}"), 3, 700);
        history.extend(more.iter().cloned());
        current.extend(more);
    }
    let listed = list_archives(tmp.path(), "s").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(listed
        .iter()
        .all(|a| a.meta_path.is_some() && a.message_count.is_some_and(|n| n > 0)));
    let log = events(&tmp.path().join("s"));
    assert_eq!(
        log.iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    // Through every compaction: thinking, shortened results, and both, exactly.
    let restored = restore_messages(&current, tmp.path(), "s").unwrap();
    assert_identical(&rebuilt(&current, restored), &history);
}

#[test]
fn sixty_four_concurrent_compactions_with_thinking_take_sequences_1_to_64() {
    let tmp = tempfile::tempdir().unwrap();
    let mut input = vec![json!({"role": "system", "content": "You are a coding agent."})];
    input.extend(thinking_turns("c", 8, 600));
    let input = std::sync::Arc::new(input);
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let input = input.clone();
            let dir = tmp.path().to_path_buf();
            std::thread::spawn(move || run(&input, &thinking_options(&dir, "c")))
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut sequences = Vec::new();
    for outcome in &outcomes {
        assert!(
            outcome.compacted
                && outcome
                    .warnings
                    .iter()
                    .all(|w| w.contains("shortened to fit") || is_user_messages_warning(w)),
            "{outcome:?}"
        );
        assert!(!outcome.transformations.is_empty() && !outcome.offloaded.is_empty());
        let path = outcome.archive_path.as_ref().unwrap();
        assert_eq!(outcome.thinking_archive_path.as_ref(), Some(path));
        sequences.push(sequence_of(path));
    }
    sequences.sort_unstable();
    assert_eq!(sequences, (1..=64).collect::<Vec<_>>());
    let listed = list_archives(tmp.path(), "c").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        (1..=64).collect::<Vec<_>>()
    );
    // Each compaction's result restores from its own archive.
    for outcome in outcomes.iter().step_by(9) {
        let result = assembled(&input, outcome);
        let restored = restore_messages(&result, tmp.path(), "c").unwrap();
        assert_identical(&rebuilt(&result, restored), &input);
    }
    // Prune removes one archive (and its metadata) per compaction.
    let report = prune_archives(
        tmp.path(),
        &PruneOptions {
            older_than_days: 0.0,
            session_id: Some("c".into()),
        },
    );
    let report = report.unwrap();
    let archives = report
        .removed
        .iter()
        .filter(|p| archive::parse_archive_name(p.rsplit('/').next().unwrap()).is_some())
        .count();
    assert_eq!((archives, report.removed.len()), (64, 128));
}

/// The fixture written by the code before one compaction took one number (see its
/// `generate.mjs`): two chains of compactions in the separate-archives layout.
fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/separate-archives")
}

fn fixture_json(name: &str) -> Vec<Value> {
    serde_json::from_str(&fs::read_to_string(fixture().join(name)).unwrap()).unwrap()
}

#[test]
fn archives_in_the_separate_archives_layout_still_restore_and_list() {
    let archives = fixture().join("archives");
    for (session, count) in [("thinking-offload", 6), ("openai-offload", 2)] {
        let compacted = fixture_json(&format!("{session}.compacted.json"));
        let input = fixture_json(&format!("{session}.input.json"));
        let restored = restore_messages(&compacted, &archives, session).unwrap();
        assert_identical(&rebuilt(&compacted, restored), &input);
        let listed = list_archives(&archives, session).unwrap();
        assert_eq!(
            listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
            (1..=count).collect::<Vec<_>>(),
            "{session}"
        );
    }
}

#[test]
fn a_session_in_the_separate_archives_layout_goes_on_with_one_number_per_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("thinking-offload");
    archive::create_private_dir(&session).unwrap();
    for entry in fs::read_dir(fixture().join("archives/thinking-offload")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), session.join(entry.file_name())).unwrap();
    }
    let mut history = fixture_json("thinking-offload.input.json");
    let mut current = fixture_json("thinking-offload.compacted.json");
    let more = thinking_turns("new", 4, 700);
    history.extend(more.iter().cloned());
    current.extend(more);
    let outcome = run(&current, &thinking_options(tmp.path(), "thinking-offload"));
    assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
    assert!(!outcome.transformations.is_empty() && !outcome.offloaded.is_empty());
    assert_eq!(sequence_of(outcome.archive_path.as_ref().unwrap()), 7);
    let listed = list_archives(tmp.path(), "thinking-offload").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    // Old and new archives in one chain restore exactly.
    let result = assembled(&current, &outcome);
    let restored = restore_messages(&result, tmp.path(), "thinking-offload").unwrap();
    assert_identical(&rebuilt(&result, restored), &history);
}

#[test]
fn archive_objects_of_the_wrong_shape_are_refused_clearly_and_listed_without_a_count() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("s");
    archive::create_private_dir(&session).unwrap();
    let message = json!({"role": "user", "content": "original"});
    let line = added::thinking_line_text(&[(0, false)], Some("compact-20260101T000000Z-5.json"));
    for (sequence, body, wanted) in [
        (1, json!({"keptOriginals": {}}), "\"messages\" array"),
        (2, json!({"messages": {}}), "\"messages\" array"),
        (
            3,
            json!({"messages": [], "keptOriginals": []}),
            "\"keptOriginals\" is not an object",
        ),
        (
            4,
            json!({"messages": [], "keptOriginals": {"shortened": {}}}),
            "\"keptOriginals.shortened\" is not an array",
        ),
        // The thinking line names one original; the archive holds none.
        (
            5,
            json!({"messages": [message], "keptOriginals": {"shortened": [message]}}),
            "but keptOriginals.thinkingRemoved of compact-20260101T000000Z-5.json holds 0",
        ),
    ] {
        let name = format!("compact-20260101T000000Z-{sequence}.json");
        archive::write_new_file(&session, &name, body.to_string().as_bytes()).unwrap();
        let summary = recorded(
            &session,
            json!({"role": "user", "content": format!(
                "{}\n\n{line}",
                added::summary_message_text(1, Some(&name), "## Goal\nx")
            )}),
        );
        let kept = json!({"role": "assistant", "content": "kept"});
        let error = restore_messages(&[summary, kept], tmp.path(), "s").unwrap_err();
        assert_eq!(error.code(), "INVALID_ARCHIVE", "{sequence}: {error}");
        assert!(error.to_string().contains(wanted), "{sequence}: {error}");
    }
    // A shortened message naming an original its archive does not hold.
    let marker =
        "[… context-compact: 10 tokens elided from this tool result. The full original is \
                  keptOriginals.shortened[3] of the archive compact-20260101T000000Z-5.json …]";
    let shortened =
        json!({"role": "tool", "tool_call_id": "c", "content": format!("head\n{marker}\ntail")});
    let error = restore_messages(&[shortened], tmp.path(), "s").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("message 3 of keptOriginals.shortened of compact-20260101T000000Z-5.json, which holds 1"),
        "{error}"
    );
    let counts: Vec<Option<usize>> = list_archives(tmp.path(), "s")
        .unwrap()
        .iter()
        .map(|a| a.message_count)
        .collect();
    // Only the messages the compaction replaced are counted, not the kept originals beside them.
    assert_eq!(counts, vec![None, None, Some(0), Some(0), Some(1)]);
}
