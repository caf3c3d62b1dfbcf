//! Failures read from the text of tool results, against the real sessions beside the
//! repository (`../shared/data`, never copied into it): precision first. Where the agent flags
//! a failed call (pi's `isError`, Claude Code's `is_error`), every result the text alone reads
//! as failed must be flagged: an unflagged one is a success read as a failure. Where the agent
//! has no flag (mini-swe-agent, OpenHands), every result read as failed must not state exit
//! status 0 (read here by this test's own pattern). Skips with a message when the data is absent.

use std::path::{Path, PathBuf};

use context_compact_core::carry::ledger::call_failed;
use context_compact_core::model::message::tool_result_text;
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

/// One tool result: its session, its text, its flag when the agent has one.
struct Result {
    session: String,
    text: String,
    flag: Option<bool>,
}

fn text_of(content: Option<&Value>) -> String {
    tool_result_text(content)
}

/// pi's own sessions: `toolResult` messages with `isError`.
fn pi_results(file: &str, out: &mut Vec<Result>) {
    let text = std::fs::read_to_string(data_dir().join(file)).expect("session reads");
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line).expect("a JSON line");
        if entry["type"] != "message" || entry["message"]["role"] != "toolResult" {
            continue;
        }
        let message = &entry["message"];
        out.push(Result {
            session: file.to_string(),
            text: text_of(message.get("content")),
            flag: Some(message["isError"].as_bool().unwrap_or(false)),
        });
    }
}

/// real/*.json: Anthropic `tool_result` blocks (flagged by `is_error`) and OpenAI `tool`
/// messages (no flag).
fn real_results(file: &str, out: &mut Vec<Result>) {
    let text = std::fs::read_to_string(data_dir().join("real").join(file)).expect("reads");
    let messages: Vec<Value> = serde_json::from_str(&text).expect("session parses");
    for message in &messages {
        if message["role"] == "tool" {
            out.push(Result {
                session: file.to_string(),
                text: text_of(message.get("content")),
                flag: None,
            });
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push(Result {
                    session: file.to_string(),
                    text: text_of(block.get("content")),
                    flag: Some(block["is_error"].as_bool().unwrap_or(false)),
                });
            }
        }
    }
}

fn results() -> Option<Vec<Result>> {
    let dir = data_dir();
    let Ok(manifest) = std::fs::read_to_string(dir.join("real/manifest.json")) else {
        eprintln!(
            "skipping: no real sessions at {} (they live beside the repository)",
            dir.display()
        );
        return None;
    };
    let manifest: Vec<Value> = serde_json::from_str(&manifest).expect("manifest parses");
    let mut out = Vec::new();
    for file in [
        "pi-session-large.jsonl",
        "pi-session-before-compaction.jsonl",
    ] {
        pi_results(file, &mut out);
    }
    for entry in &manifest {
        real_results(entry["file"].as_str().expect("file"), &mut out);
    }
    Some(out)
}

/// An exit status of 0 stated anywhere at the ends of the output, by this test's own reading.
fn states_success(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let n = lines.len();
    lines.iter().enumerate().any(|(i, line)| {
        (i < 3 || i + 6 > n)
            && (*line == "<returncode>0</returncode>"
                || line.contains("exit code 0.]")
                || line.contains("exit code 0]"))
    })
}

#[test]
fn no_success_of_the_real_sessions_is_read_as_a_failure() {
    let Some(results) = results() else { return };
    let mut wrong = Vec::new();
    let mut sessions: Vec<(String, [usize; 4])> = Vec::new();
    for result in &results {
        let read = call_failed(false, &result.text);
        let success = match result.flag {
            Some(flag) => !flag,
            None => states_success(&result.text),
        };
        if read && success {
            let head: String = result.text.chars().take(160).collect();
            wrong.push(format!("{}: {head:?}", result.session));
        }
        let at = match sessions.iter().position(|(s, _)| *s == result.session) {
            Some(at) => at,
            None => {
                sessions.push((result.session.clone(), [0; 4]));
                sessions.len() - 1
            }
        };
        let counts = &mut sessions[at].1;
        counts[0] += 1;
        counts[1] += usize::from(read);
        counts[2] += usize::from(result.flag == Some(true));
        counts[3] += usize::from(read && result.flag == Some(true));
    }
    for (session, [all, read, flagged, both]) in &sessions {
        println!(
            "{session:40} results {all:4}  read as failed from the text {read:3}  flagged {flagged:3}  flagged and read {both:3}"
        );
    }
    assert!(
        wrong.is_empty(),
        "successes read as failures:\n{}",
        wrong.join("\n")
    );
    // Claude Code's pre-commit hook says "Pre-commit validation failed:" (cc-spotter-4te-pre):
    // each of its flagged failures is read from the text alone too.
    let hook: Vec<&Result> = results
        .iter()
        .filter(|r| r.text.starts_with("Pre-commit validation failed:"))
        .collect();
    assert!(hook.len() >= 5);
    assert!(hook
        .iter()
        .all(|r| r.flag == Some(true) && call_failed(false, &r.text)));
    // The data holds failures of each kind: the test is not vacuous.
    assert!(sessions.iter().all(|(_, c)| c[0] > 0));
    assert!(
        results
            .iter()
            .filter(|r| call_failed(false, &r.text))
            .count()
            > 20
    );
}
