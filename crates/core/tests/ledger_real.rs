//! The ledger against real agent sessions (`../shared/data/real`, beside the repository; never
//! copied into it). Every file the manifest says a session modified must be in the ledger's
//! created ∪ modified ∪ deleted lists, and in its rendered text. Skips with a message when the
//! data is absent.

use std::path::{Path, PathBuf};

use context_compact_core::carry::ledger::Ledger;
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real")
}

struct Session {
    file: String,
    messages: Vec<Value>,
    files_modified: Vec<String>,
    files_read: Vec<String>,
}

fn sessions() -> Option<Vec<Session>> {
    let dir = data_dir();
    let manifest = match std::fs::read_to_string(dir.join("manifest.json")) {
        Ok(text) => text,
        Err(_) => {
            eprintln!(
                "skipping: no real sessions at {} (they live beside the repository)",
                dir.display()
            );
            return None;
        }
    };
    let manifest: Vec<Value> = serde_json::from_str(&manifest).expect("manifest.json parses");
    let strings = |entry: &Value, key: &str| -> Vec<String> {
        entry[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let sessions = manifest
        .iter()
        .map(|entry| {
            let file = entry["file"].as_str().expect("file name").to_string();
            let text = std::fs::read_to_string(dir.join(&file)).expect("session file reads");
            let messages: Vec<Value> = serde_json::from_str(&text).expect("session parses");
            Session {
                files_modified: strings(entry, "files_modified"),
                files_read: strings(entry, "files_read"),
                file,
                messages,
            }
        })
        .collect();
    Some(sessions)
}

/// The mini-swe-agent manifests name files relative to the repository (from its final git diff)
/// while its commands may use absolute paths (`cd /testbed && …`): a ledger path matches when it
/// equals the manifest's or ends with it on a path-component boundary.
fn same_file(ledger_path: &str, manifest_path: &str) -> bool {
    let ledger_path = ledger_path.trim_start_matches("./");
    ledger_path == manifest_path
        || ledger_path
            .strip_suffix(manifest_path)
            .is_some_and(|head| head.ends_with('/'))
}

fn written(ledger: &Ledger) -> Vec<&String> {
    ledger
        .files_created
        .iter()
        .chain(&ledger.files_modified)
        .chain(&ledger.files_deleted)
        .collect()
}

/// The messages with every tool result's text removed: what the tool calls alone tell.
fn calls_only(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| {
            let mut message = message.clone();
            if message["role"] == "tool" {
                message["content"] = Value::String(String::new());
            } else if let Some(blocks) = message["content"].as_array_mut() {
                for block in blocks {
                    if block["type"] == "tool_result" {
                        block["content"] = Value::String(String::new());
                    }
                }
            }
            message
        })
        .collect()
}

/// Files no tool call touched: requests-1142's final `git add -A` swept a pre-existing,
/// untracked `build/` tree into the submitted diff. Only the output of that `git diff` names
/// them, so only the ledger that reads results can know them.
fn only_in_results(session: &str, path: &str) -> bool {
    session == "mini-gemini3-requests-1142.json" && path.starts_with("build/")
}

#[test]
fn every_modified_file_of_the_real_sessions_is_in_the_ledger() {
    let Some(sessions) = sessions() else { return };
    let mut failures = Vec::new();
    for session in &sessions {
        let ledger = Ledger::extract(&session.messages);
        let from_calls = Ledger::extract(&calls_only(&session.messages));
        let rendered = ledger.render();
        let expected = &session.files_modified;
        let found = |ledger: &Ledger, path: &str| {
            written(ledger)
                .into_iter()
                .find(|item| same_file(item, path))
                .cloned()
        };
        let mut hits = 0;
        let mut call_hits = 0;
        for path in expected {
            match found(&ledger, path) {
                Some(item) => {
                    hits += 1;
                    // Its line: the path, with how many times it was written when more than once.
                    let listed = rendered.lines().any(|line| {
                        line.strip_prefix("- ")
                            .and_then(|rest| rest.strip_prefix(item.as_str()))
                            .is_some_and(|rest| {
                                rest.is_empty()
                                    || (rest.starts_with(" (") && rest.ends_with(" edits)"))
                            })
                    });
                    if !listed {
                        failures.push(format!(
                            "{}: {item} not in the rendered ledger",
                            session.file
                        ));
                    }
                }
                None => failures.push(format!("{}: {path} missing from the ledger", session.file)),
            }
            if found(&from_calls, path).is_some() {
                call_hits += 1;
            } else if !only_in_results(&session.file, path) {
                failures.push(format!(
                    "{}: {path} missing from the ledger of the calls alone",
                    session.file
                ));
            }
        }
        // Manifests built from the tool calls list exactly what was written; for them a file
        // that was only read must not show up as written. (The mini-* manifests take files from
        // the final diff, so files edited and then restored count as "read" there.)
        if !session.file.starts_with("mini-") {
            for path in session
                .files_read
                .iter()
                .filter(|path| !expected.contains(path))
            {
                if let Some(item) = found(&ledger, path) {
                    failures.push(format!(
                        "{}: {item} was only read but is listed as written",
                        session.file
                    ));
                }
            }
        }
        let extra: Vec<_> = written(&ledger)
            .into_iter()
            .filter(|item| !expected.iter().any(|path| same_file(item, path)))
            .collect();
        let recall = |hits: usize| {
            if expected.is_empty() {
                "n/a".to_string()
            } else {
                format!("{:.0}%", 100.0 * hits as f64 / expected.len() as f64)
            }
        };
        println!(
            "{:38} recall {}/{} ({}), from calls alone {}/{} ({}); also written: {:?}",
            session.file,
            hits,
            expected.len(),
            recall(hits),
            call_hits,
            expected.len(),
            recall(call_hits),
            extra
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
