//! Whether a tool's output says the call failed, when the tool did not flag it (`is_error`).
//! Many agents report a failed command or file operation as plain text: Claude Code's
//! `Exit code 1`, mini-swe-agent's `<returncode>1</returncode>`, OpenHands' `[The command
//! completed with exit code 1.]` or `Ran into [Errno 13] Permission denied`, a shell's
//! `cat: x: Permission denied`.
//!
//! Rehydration uses it (SPEC §11): the library shows after a summary only files the agent read or
//! wrote successfully, so a read the agent was denied never becomes a read through the caller's
//! `read(path)`. A false alarm costs little there (a file is not shown), so the test leans to
//! "failed": it looks at the first and last lines of the output for an exit status other than 0
//! or an error phrase.

use std::sync::LazyLock;

use regex::Regex;

/// An exit status as agents print it, with its number.
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
pub fn reported_failure(output: &str) -> bool {
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
