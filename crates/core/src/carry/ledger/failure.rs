//! Whether a tool call failed, and the line of its output that says why.
//!
//! A flag says it where the format has one (Anthropic `is_error`, Bedrock `status: "error"`,
//! Gemini `response.error`, AI SDK `error-text` / `error-json` outputs, LangChain `status:
//! "error"`: the views set `is_error`). OpenAI Chat tool messages and the Responses API have no
//! such flag, and agents that act through text report failure in the output itself, so these
//! forms are read from the text too (each from the agent's own source or a recorded session):
//!
//! | form | agent |
//! |---|---|
//! | first line `Exit code N` | Claude Code `Bash` (data/real/cc-*: `Exit code 2`) |
//! | `<returncode>N</returncode>` | mini-swe-agent's observation template (data/real/mini-*) |
//! | `[The command completed with exit code N.]`, `[Command finished with exit code N]` | OpenHands terminal (data/real/openhands-*) |
//! | a line `Exit code: N` | Codex exec output (`Exit code: 1` / `Wall time:` / `Output:`) |
//! | a line `Exit Code: N` | Gemini CLI `run_shell_command` |
//! | a line `Command exited with code N` | pi `bash` |
//! | `{"metadata": {"exit_code": N}}` | Codex's earlier JSON exec output |
//! | starts with `ERROR:` or `Error:` | OpenHands V0 error observations, many function-calling loops |
//! | starts with `[An error occurred during execution.]` | OpenHands agent SDK error observations |
//! | starts with `<tool_use_error>` | Claude Code file tools |
//! | first line `Error <doing something>: …` (`Error executing script: …`, `Error reading file …:`) | pi's extension tools (its browser tool), many MCP servers and function-calling loops |
//! | first line `Error [CODE]: …`, `Error 404: …` | Node.js errors (`Error [ERR_MODULE_NOT_FOUND]: …`), HTTP tools |
//! | first line `… failed: …`, `… failed with …` (`Pre-commit validation failed:`, `Command failed with exit code 1: …`, `Request failed with status code 404`) | Claude Code hooks (data/real/cc-*), execa, axios, build tools |
//! | first line an exception: `Exception: …`, `Exception in thread …`, `Uncaught …`, `Unhandled …`, `java.io.IOException: …`, `TypeError: …` | tools that return the exception they caught |
//! | a Python traceback that ends the output with its exception line | a script that crashed (data/real/mini-*) |
//! | a line `exit status N` (Go), `Process exited with code N`, `… returned non-zero exit status N` (Python `CalledProcessError`) | `go run`, process wrappers, Python tools |
//! | `Ran into [Errno N] … while trying to …` | OpenHands file editor (data/real/openhands-*: the failed create of `hello.py`) |
//! | starts with ``Invalid `…` parameter:``, `No replacement was performed` | the text editors of the Anthropic schema (OpenHands, SWE-agent) |
//! | `Your proposed edit has introduced new syntax error(s)` | SWE-agent's linting edit tools |
//!
//! An exit status is read only from the first two and the last five non-empty lines (where
//! every form above puts it), so a log that merely quotes one is not a failure; and an exit
//! status of 1 with no other output is not one either: it is how `grep` says "no match" and
//! `test` says "false" (mini-swe-agent's sessions hold many). The forms read from a message's
//! wording (`Error …:`, `… failed:`, an exception, a traceback) are read only from the first
//! line — an indented line or one that starts with code is content, not a tool's verdict —
//! and give way to an exit status the output states: a command that printed an error and
//! exited 0 succeeded.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// Did the call whose result is `text` (flagged `is_error` or not) fail?
pub(crate) fn failed(is_error: bool, text: &str) -> bool {
    is_error || failure_in_text(text)
}

/// The failure forms of the module docs, read from a result without a flag.
pub(crate) fn failure_in_text(text: &str) -> bool {
    let trimmed = text.trim_start();
    const STARTS: &[&str] = &[
        "ERROR:",
        "Error:",
        "[An error occurred during execution.]",
        "<tool_use_error>",
        "No replacement was performed",
        "Your proposed edit has introduced new syntax error",
    ];
    if STARTS.iter().any(|start| trimmed.starts_with(start)) {
        return true;
    }
    if trimmed.starts_with("Invalid `") && first_line(trimmed).contains("` parameter") {
        return true;
    }
    if trimmed.starts_with("Ran into ") && first_line(trimmed).contains(" while trying to ") {
        return true;
    }
    if let Some(code) = json_exit_code(trimmed) {
        return code != 0;
    }
    match exit_status(text) {
        Some(code) => code != 0 && !(code == 1 && is_silent(text)),
        None => worded_failure(text),
    }
}

/// `Error <doing something>:` and `Error [CODE]:` / `Error 404:` at the start of a line (not
/// "Error handling:", a heading).
static ERROR_DOING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:Error|ERROR) (?:(?:in|while|during|when|on|at|for|from|with|after|calling)\b|\[[A-Z0-9_]+\]|[0-9]{3}\b|[a-z]+ing\b)[^\n]{0,160}?:(?:\s|$)",
    )
    .expect("a valid pattern")
});

/// `<Something> failed: …`, `<Something> failed with …`: a capitalised verdict, words only
/// before "failed" (not a line of code, not a tally like "2 failed", not a lower-case log line
/// like npm's `npm error command failed`, which a command that succeeded prints too).
static FAILED_COLON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[A-Z][A-Za-z0-9_'./ -]{0,80}? failed(?::| with \S|\s*$|\.\s*$| \(code -?[0-9]+\))",
    )
    .expect("a valid pattern")
});

/// An exception stated as the output's first line: `Exception: …`, `Exception in thread …`,
/// `Uncaught …` / `Unhandled …` errors, a qualified or plain exception class followed by its
/// message (`java.io.IOException: …`, `TypeError: …`, `ValueError`).
static EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:Exception(?::| in thread | occurred)|(?:Uncaught|Unhandled) (?:exception|error|rejection|promise|[A-Z][A-Za-z]*(?:Error|Exception))|(?:[a-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception)(?::\s|:$|$))",
    )
    .expect("a valid pattern")
});

/// The last line of a Python traceback: the exception's class, maybe qualified, and its message.
static TRACEBACK_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?::\s.*|:)?$")
        .expect("a valid pattern")
});

/// The forms read from the wording of an output that states no exit status (module docs):
/// the first line says an error, a failure or an exception, or a Python traceback ends it.
fn worded_failure(text: &str) -> bool {
    // The first non-empty line, as written (not trimmed: an indented line is content).
    let Some(first) = text.lines().find(|line| !line.trim().is_empty()) else {
        return false;
    };
    let first = first.trim_end();
    // "Error handling:", "Error reporting:": headings of a document, not a verdict.
    const NOUNS: &[&str] = &[
        "handling",
        "reporting",
        "logging",
        "tracking",
        "tracing",
        "messaging",
    ];
    let error_doing = ERROR_DOING.is_match(first)
        && !first
            .split_whitespace()
            .nth(1)
            .is_some_and(|word| NOUNS.contains(&word.trim_end_matches(':')));
    if error_doing || FAILED_COLON.is_match(first) || EXCEPTION_LINE.is_match(first) {
        return true;
    }
    ends_in_traceback(text)
}

/// A Python traceback ends the output: a line `Traceback (most recent call last):` at the
/// start of a line, and after it the last line (status lines aside) is the exception's.
fn ends_in_traceback(text: &str) -> bool {
    const HEADER: &str = "Traceback (most recent call last):";
    let Some(at) = text.rfind(HEADER) else {
        return false;
    };
    if at > 0 && !text[..at].ends_with('\n') {
        return false;
    }
    let after = &text[at + HEADER.len()..];
    // The last line that is not a status line, as written: the frames (`  File "…", line N`)
    // are indented, the exception line is not.
    let Some(last) = after
        .lines()
        .rev()
        .find(|line| !clean(line).is_empty() && !is_status_line(clean(line)))
    else {
        return false;
    };
    !last.starts_with(char::is_whitespace) && TRACEBACK_END.is_match(clean(last))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The exit status a result states, in one of the forms of the module docs.
pub(crate) fn exit_status(text: &str) -> Option<i64> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let n = lines.len();
    let candidates = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < 2 || *i + 5 >= n)
        .map(|(_, l)| *l);
    for line in candidates {
        if let Some(code) = status_line_code(line) {
            return Some(code);
        }
    }
    None
}

/// The exit status a status line states (`None`: not a status line of an exit).
fn status_line_code(line: &str) -> Option<i64> {
    let number = |text: &str| text.trim().parse::<i64>().ok();
    if let Some(rest) = line.strip_prefix("Exit code ") {
        return number(rest);
    }
    for prefix in [
        "Exit code: ",
        "Exit Code: ",
        "Command exited with code ",
        "Process exited with code ",
        "exit status ",
        "Exit status: ",
        "Exit status ",
    ] {
        if let Some(rest) = line.strip_prefix(prefix) {
            return number(rest);
        }
    }
    // Python's `CalledProcessError`: "Command '…' returned non-zero exit status 2."
    if let Some((_, rest)) = line.rsplit_once(" returned non-zero exit status ") {
        return number(rest.trim_end_matches('.'));
    }
    if let Some(rest) = line.strip_prefix("<returncode>") {
        return number(rest.split('<').next()?);
    }
    for (prefix, suffix) in [
        ("[The command completed with exit code ", ".]"),
        ("[Command finished with exit code ", "]"),
    ] {
        if let Some(rest) = line.strip_prefix(prefix) {
            let code = number(rest.strip_suffix(suffix)?)?;
            // -1: OpenHands' "no exit code yet" (the command is still running).
            return (code != -1).then_some(code);
        }
    }
    None
}

/// Codex's earlier exec output: `{"output": "...", "metadata": {"exit_code": N, ...}}`.
fn json_exit_code(text: &str) -> Option<i64> {
    if !text.starts_with('{') || !text.contains("\"exit_code\"") {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    value.get("metadata")?.get("exit_code")?.as_i64()
}

/// Nothing but status lines: the output of a command that printed nothing.
fn is_silent(text: &str) -> bool {
    text.lines()
        .map(clean)
        .all(|line| line.is_empty() || is_status_line(line))
}

/// A line without the tags some tools wrap their errors in.
fn clean(line: &str) -> &str {
    let mut line = line.trim();
    for tag in [
        "<tool_use_error>",
        "</tool_use_error>",
        "<error>",
        "</error>",
    ] {
        line = line.strip_prefix(tag).unwrap_or(line);
        line = line.strip_suffix(tag).unwrap_or(line);
    }
    line.trim()
}

/// A line that says how a command ended or where it ran, not what went wrong.
fn is_status_line(line: &str) -> bool {
    const EXACT: &[&str] = &[
        "<output>",
        "</output>",
        "ERROR:",
        "Error:",
        "Output:",
        "[An error occurred during execution.]",
        "Traceback (most recent call last):",
        "Error: (none)",
        "Signal: (none)",
        "Background PIDs: (none)",
        "(no output)",
    ];
    const STARTS: &[&str] = &[
        "[Current working directory:",
        "[Python interpreter:",
        "Wall time:",
        "Process Group PGID:",
        "Directory:",
    ];
    status_line_code(line).is_some()
        || EXACT.contains(&line)
        || STARTS.iter().any(|start| line.starts_with(start))
        || line.chars().all(|c| "=-_*~#+ ".contains(c))
}

/// How much a line says about what went wrong: 3 names an error, 1 only counts failures (`1
/// failed, 2 passed`, `could not compile`), 0 says nothing of one. A banner (`===== ERRORS
/// =====`) names no error of its own.
fn line_score(line: &str) -> u8 {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // "1 failed, 71 passed in 2.31s", "collected 24 items / 2 errors", "Tests: 1 failed, 3 total".
    const TALLY_WORDS: &[&str] = &[
        "failed",
        "passed",
        "error",
        "errors",
        "failures",
        "failure",
        "skipped",
        "xfailed",
        "xpassed",
        "warnings",
        "warning",
        "in",
        "tests",
        "test",
        "total",
        "suites",
        "and",
        "s",
        "ms",
        "deselected",
        "selected",
        "of",
        "collected",
        "items",
        "item",
    ];
    let is_number =
        |w: &str| w.parse::<f64>().is_ok() || w.trim_end_matches('s').parse::<f64>().is_ok();
    let tallies_only = words.iter().any(|w| is_number(w))
        && words
            .iter()
            .all(|w| is_number(w) || TALLY_WORDS.contains(w));
    if tallies_only {
        // "collected 96 items" counts nothing that failed.
        let failing = ["failed", "error", "errors", "failures", "failure"];
        return u8::from(words.iter().any(|w| failing.contains(w)));
    }
    if lower.contains("could not compile")
        || lower.starts_with("error: process didn't exit successfully")
    {
        return 1;
    }
    const SEPARATORS: &str = "=-_*~#+ ";
    let inner = line.trim_matches(|c| SEPARATORS.contains(c));
    let banner = line.len() >= inner.len() + 6;
    if banner && !inner.contains(':') && inner.split_whitespace().count() <= 3 {
        return 0;
    }
    const NAMES_AN_ERROR: &[&str] = &[
        "error",
        "exception",
        "failed",
        "failure",
        "fatal",
        "panicked",
        "not found",
        "no such file",
        "no module named",
        "denied",
        "cannot",
        "can't",
        "could not",
        "couldn't",
        "unable to",
        "undefined",
        "invalid",
        "refused",
        "timed out",
        "did not appear verbatim",
        "errno",
    ];
    if NAMES_AN_ERROR.iter().any(|marker| lower.contains(marker))
        || line.starts_with("E ")
        || line.starts_with("FAIL")
    {
        return 3;
    }
    0
}

/// The text a result's JSON wraps: Gemini's `{"error": "…"}` response, Codex's earlier
/// `{"output": "…", "metadata": {…}}`; any other text as it is.
pub(crate) fn unwrapped(text: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') && (trimmed.contains("\"error\"") || trimmed.contains("\"output\""))
    {
        if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(trimmed) {
            if let Some(inner) = ["error", "output"]
                .iter()
                .find_map(|key| fields.get(*key).and_then(Value::as_str))
            {
                return std::borrow::Cow::Owned(inner.to_string());
            }
        }
    }
    std::borrow::Cow::Borrowed(text)
}

/// The lines of a failed call's output worth carrying, each with its score (see
/// [`line_score`]), in order: status lines (exit codes, prompts, separators) left out, tags
/// removed, repeated lines once. (`text`: the output as [`unwrapped`] gives it.)
pub(crate) fn scored_lines(text: &str) -> Vec<(&str, u8)> {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .map(clean)
        .filter(|line| !line.is_empty() && !is_status_line(line))
        .filter(|line| seen.insert(*line))
        .map(|line| (line, line_score(line)))
        .collect()
}

/// Where the line that says best what went wrong is among `lines` (from [`scored_lines`]): the
/// first line naming an error — the last one after a Python traceback, whose exception line
/// ends it — else the first that counts failures, else the first line; `None` for no lines.
pub(crate) fn best_line(text: &str, lines: &[(&str, u8)]) -> Option<usize> {
    let traceback = text.contains("Traceback (most recent call last):");
    let named: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].1 == 3).collect();
    let pick = if traceback {
        named.last().copied()
    } else {
        named.first().copied()
    };
    pick.or_else(|| lines.iter().position(|(_, score)| *score == 1))
        .or_else(|| (!lines.is_empty()).then_some(0))
}

/// The one line that says what went wrong in a failed call's output (see [`best_line`]); the
/// first line of the output when every line is a status line (`Exit code 1` alone).
pub(crate) fn informative_line(text: &str) -> String {
    let text = unwrapped(text);
    let text = text.as_ref();
    let lines = scored_lines(text);
    match best_line(text, &lines) {
        Some(at) => lines[at].0.to_string(),
        None => text
            .lines()
            .map(clean)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_string(),
    }
}

// Whether a call may have failed, for rehydration: a looser reading than `failed`. Many agents
// report a failed command or file operation as plain text: Claude Code's
// `Exit code 1`, mini-swe-agent's `<returncode>1</returncode>`, OpenHands' `[The command
// completed with exit code 1.]` or `Ran into [Errno 13] Permission denied`, a shell's
// `cat: x: Permission denied`.
//
// Rehydration uses it: the library shows after a summary only files the agent read or
// wrote successfully, so a read the agent was denied never becomes a read through the caller's
// `read(path)`. A false alarm costs little there (a file is not shown), so the test leans to
// "failed": it looks at the first and last lines of the output for an exit status other than 0
// or an error phrase, where `failed` reads only the documented forms.

/// An exit status as agents print it, with its number (any of the forms, loosely).
static EXIT_STATUS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:exit(?:ed)?(?: with)? (?:code|status)|return ?code|returncode>|exit_code)\s*[:=]?\s*(-?\d+)",
    )
    .expect("a valid pattern")
});

/// Phrases that say an operation failed, wherever they are in a line.
const FAILURE_PHRASES: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "access denied",
    "access is denied",
    "no such file or directory",
    "file does not exist",
    "file not found",
    "does not exist",
    "is a directory",
    "not a directory",
    "read-only file system",
    "eacces",
    "enoent",
    "eperm",
    "eisdir",
    "[errno",
    "cannot open",
    "can't open",
    "could not open",
    "could not read",
    "failed to read",
    "failed to open",
    "failed to write",
    "unable to read",
    "unable to open",
    "command not found",
    "<tool_use_error>",
    "traceback (most recent call last)",
];

/// Line starts that say the output is an error message.
const FAILURE_STARTS: &[&str] = &["error:", "error ", "fatal:", "failed:", "failure:"];

/// How many lines at each end of the output are read.
const EDGE_LINES: usize = 3;

/// Does `output` say that the call failed (see the module docs)?
pub(crate) fn reported_failure(output: &str) -> bool {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let edges = lines.iter().take(EDGE_LINES).chain(
        lines
            .iter()
            .skip(EDGE_LINES.max(lines.len().saturating_sub(EDGE_LINES))),
    );
    for line in edges {
        let lower = line.to_lowercase();
        if let Some(status) = EXIT_STATUS
            .captures(&lower)
            .and_then(|c| c.get(1)?.as_str().parse::<i64>().ok())
        {
            if status != 0 {
                return true;
            }
            continue;
        }
        if FAILURE_STARTS.iter().any(|start| lower.starts_with(start))
            || FAILURE_PHRASES.iter().any(|phrase| lower.contains(phrase))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_in_the_agents_forms() {
        // Claude Code Bash (cc-spotter-gqc-pre).
        let cc = "Exit code 2\n** (CompileError) lib/spotter/transcripts.ex:12: undefined function foo/0\n    (elixir 1.18.0) expanding macro";
        assert!(failure_in_text(cc));
        assert_eq!(
            informative_line(cc),
            "** (CompileError) lib/spotter/transcripts.ex:12: undefined function foo/0"
        );
        // mini-swe-agent (mini-gemini3-requests-1142, message 53).
        let mini = "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"/testbed/test_requests.py\", line 10, in <module>\n    import requests\n  File \"/testbed/requests/cookies.py\", line 136, in <module>\n    class RequestsCookieJar(cookielib.CookieJar, collections.MutableMapping):\nAttributeError: module 'collections' has no attribute 'MutableMapping'\n</output>";
        assert!(failure_in_text(mini));
        assert_eq!(
            informative_line(mini),
            "AttributeError: module 'collections' has no attribute 'MutableMapping'"
        );
        // grep finding nothing (mini-gemini3-pytest-6197, message 37) is not a failure.
        assert!(!failure_in_text(
            "<returncode>1</returncode>\n<output>\n</output>"
        ));
        assert!(failure_in_text(
            "<returncode>127</returncode>\n<output>\nbash: line 1: ed: command not found\n</output>"
        ));
        assert!(!failure_in_text(
            "<returncode>0</returncode>\n<output>\nok\n</output>"
        ));
        // OpenHands terminal (openhands-sdk-sonnet4-hello, message 11: success).
        assert!(!failure_in_text("Hello, World!\n[The command completed with exit code 0.]\n[Current working directory: /x]\n[Command finished with exit code 0]"));
        assert!(failure_in_text("ModuleNotFoundError: No module named 'x'\n[The command completed with exit code 1.]\n[Current working directory: /x]"));
        // Still running: not a failure.
        assert!(!failure_in_text(
            "building…\n[The command completed with exit code -1.]"
        ));
        // Codex, Gemini CLI, pi.
        assert!(failure_in_text(
            "Exit code: 101\nWall time: 3.2 seconds\nOutput:\nerror[E0425]: cannot find value `x` in this scope\n"
        ));
        assert!(failure_in_text("Command: npm test\nDirectory: (root)\nOutput: FAIL src/a.test.ts\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242"));
        assert!(failure_in_text("src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n\nCommand exited with code 2"));
        assert!(failure_in_text(
            r#"{"output":"boom\n","metadata":{"exit_code":1,"duration_seconds":0.1}}"#
        ));
        assert!(!failure_in_text(
            r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#
        ));
        // A log that quotes an exit status in its middle is no status.
        let mut log = String::from("line\n");
        for n in 0..10 {
            log.push_str(&format!("step {n}\n"));
            if n == 4 {
                log.push_str("Exit code 3\n");
            }
        }
        assert!(!failure_in_text(&log));
    }

    #[test]
    fn error_texts_of_the_editors() {
        // OpenHands (openhands-sdk-sonnet4-hello, messages 3 and 7).
        assert!(failure_in_text("Ran into [Errno 2] No such file or directory: '/workspace/hello.py' while trying to write to /workspace/hello.py"));
        assert!(failure_in_text("Invalid `path` parameter: hello.py. The path should be an absolute path, starting with `/`."));
        assert!(failure_in_text(
            "ERROR:\nInvalid `path` parameter: /a. The path /a does not exist."
        ));
        assert!(failure_in_text("[An error occurred during execution.]\nNo replacement was performed, old_str `x` did not appear verbatim in /a.py."));
        assert!(failure_in_text("Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- E999 IndentationError: unexpected indent"));
        assert_eq!(
            informative_line("<tool_use_error>String to replace not found in file.\nString: foo</tool_use_error>"),
            "String to replace not found in file."
        );
        // Ordinary outputs.
        assert!(!failure_in_text(
            "Here's the result of running `cat -n` on /a.py:\n     1\tprint('error')\n"
        ));
        assert!(!failure_in_text("File created successfully at: /a.py"));
    }

    #[test]
    fn worded_failures_in_the_forms_agents_print() {
        for failed in [
            // pi's browser tool (an extension tool, no error flag).
            "Error executing script: Frame with ID 7A3F was removed",
            "Error reading file /tmp/x: ENOENT",
            "Error while fetching https://example.com: 503",
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/a/b.js'",
            "Error 404: Not Found",
            "Error loading theme 'my-theme':\n  - colors.accent: must be string",
            // Claude Code's pre-commit hook (cc-spotter-4te-pre), with its literal \n.
            "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.",
            "Command failed with exit code 1: npm test",
            "Request failed with status code 404",
            "Build failed",
            "Exception: boom",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "java.io.FileNotFoundException: /a (No such file or directory)",
            "TypeError: Cannot read properties of undefined (reading 'x')",
            "Uncaught ReferenceError: foo is not defined",
            "Unhandled exception in task",
            "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    main()\nKeyError: 'k'",
            "running…\nTraceback (most recent call last):\n  File \"a.py\", line 3\nValueError",
            "# command-line-arguments\n./main.go:3:1: syntax error\nexit status 1",
            "Process exited with code 3",
            "Command '['make']' returned non-zero exit status 2.",
            "<tool_use_error>File has not been read yet.</tool_use_error>",
        ] {
            assert!(failure_in_text(failed), "{failed:?}");
        }
        for fine in [
            "Error handling: every call returns a Result.",
            "Error reporting: see docs/errors.md",
            // Content: indented, or code, or a document that mentions failures.
            "\t\t\tthis.showError(`Bash command failed: ${errorMessage}`);",
            "  TypeError: in a quoted log",
            "const e = new TypeError('x')",
            "2 failed, 3 passed in 0.1s",
            "Tests: 0 failed",
            "The build failed last week, so we pinned the version.",
            // npm's own stderr lines, printed by a command that went on and succeeded
            // (pi-session-large): lower case, a tool's log line rather than its verdict.
            "npm error command failed\nnpm error command sh -c tsc",
            "Errors: none",
            // A traceback quoted in the middle of a log that goes on.
            "log\nTraceback (most recent call last):\n  File \"a.py\"\nKeyError: 'k'\n  handled, retrying\n    ok",
            "    Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'k'",
            // A stated exit status of 0 wins over the wording.
            "Exception: logged and ignored\n[The command completed with exit code 0.]",
            "exit status 0",
        ] {
            assert!(!failure_in_text(fine), "{fine:?}");
        }
        assert_eq!(
            informative_line("Error executing script: Frame with ID 7A3F was removed"),
            "Error executing script: Frame with ID 7A3F was removed"
        );
    }

    #[test]
    fn json_wrapped_errors_are_read_inside() {
        // Gemini's functionResponse `{error}`, as the view gives it to the ledger.
        assert_eq!(
            informative_line(r#"{"error":"Exit code 2\nerror[E0425]: boom"}"#),
            "error[E0425]: boom"
        );
        assert_eq!(
            informative_line(
                r#"{"output":"Traceback (most recent call last):\n  x\nKeyError: 'k'\n","metadata":{"exit_code":1}}"#
            ),
            "KeyError: 'k'"
        );
        assert_eq!(informative_line(r#"{"a": 1}"#), r#"{"a": 1}"#);
    }

    #[test]
    fn the_informative_line_names_the_error_not_the_status() {
        let pytest = "Exit code 1\n============================= test session starts ==============================\ncollected 72 items\n\ntesting/test_collection.py ......F.. [100%]\n\n=================================== FAILURES ===================================\n______________________________ test_pkgfile ______________________________\n    def test_pkgfile(testdir):\n>       assert col.name == 'x'\nE       AssertionError: assert 'y' == 'x'\n========================= 1 failed, 71 passed in 2.31s =========================";
        assert_eq!(
            informative_line(pytest),
            "E       AssertionError: assert 'y' == 'x'"
        );
        let cargo = "Exit code 101\n   Compiling demo v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\nerror: could not compile `demo` (bin \"demo\") due to 1 previous error";
        assert_eq!(
            informative_line(cargo),
            "error[E0425]: cannot find value `x` in this scope"
        );
        assert_eq!(informative_line("Exit code 1"), "Exit code 1");
        assert_eq!(
            informative_line("Exit code 1\n\nsomething odd"),
            "something odd"
        );
        let only_counts = "Exit code 1\n== 2 failed, 3 passed in 0.12s ==";
        assert_eq!(
            informative_line(only_counts),
            "== 2 failed, 3 passed in 0.12s =="
        );
    }

    #[test]
    fn failures_reported_as_text_are_recognised() {
        for failed in [
            "cat: /etc/shadow: Permission denied",
            "Exit code 1\n(eval):1: permission denied: ./x",
            "<returncode>127</returncode>\n<output>\nbash: rg: command not found\n</output>",
            "Ran into [Errno 2] No such file or directory: '/workspace/hello.py' while trying to write",
            "some output\n[The command completed with exit code 2.]",
            "Process exited with code 1",
            "<tool_use_error>File does not exist.</tool_use_error>",
            "error: could not compile `x`",
            "Traceback (most recent call last):\n  File \"a.py\"",
        ] {
            assert!(reported_failure(failed), "{failed:?}");
        }
        for fine in [
            "fn main() {}\n",
            "     1→import Config\n     2→",
            "<returncode>0</returncode>\n<output>\nok\n</output>",
            "Hello, World!\n[The command completed with exit code 0.]",
            "",
            // Deep inside a long file, a phrase is content.
            &format!(
                "line\n{}permission denied\n{}end",
                "x\n".repeat(10),
                "y\n".repeat(10)
            ),
        ] {
            assert!(!reported_failure(fine), "{fine:?}");
        }
    }
}
