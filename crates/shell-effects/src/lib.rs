//! Which files a shell command line creates, modifies, deletes or reads.
//!
//! Agents that act through a shell (mini-swe-agent, Codex, any agent's `bash` tool) edit files
//! with `cat > f <<'EOF'`, `sed -i`, `mv`, `patch`, … rather than with file tools, so the ledger
//! has to read their command lines. This is a best-effort reading, never an execution:
//!
//! - A small lexer that knows quoting ('…', "…", backslashes), comments, control operators
//!   (`&&` `||` `;` `|` `&` newlines, subshell parentheses), redirections and heredocs. Heredoc
//!   bodies are data, never scanned as commands, but they are remembered: `cat > x.sh <<EOF`
//!   followed by `./x.sh` (or `bash x.sh`) scans the script's body, and `patch < fix.diff`
//!   reads a patch written earlier.
//! - `cd` is followed within one command line: after `cd /abs` or `cd rel`, relative paths are
//!   reported joined to that directory (so `cd /testbed && sed -i … a.py` names
//!   `/testbed/a.py`); after a `cd` that cannot be resolved statically (`cd $DIR`, `cd -`,
//!   `cd ~`), paths are reported as written. A subshell's `cd` ends with the subshell, and a
//!   command line starts in the agent's working directory (paths relative to it stay relative):
//!   most harnesses run each command in a fresh shell, and those that keep one do not say so in
//!   the transcript.
//! - Words built from expansions (`$VAR`, `$(…)`, backticks) are never reported as paths:
//!   their value is unknown. Globs are reported as written (`rm -f *.pyc`).
//!
//! It must never panic, whatever the input (a proptest checks random strings).

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

// What a tool call does to a file lives here, at the bottom of the ledger's modules: the file
// tools' table (`protocols`) and the ledger import it, and this module imports neither.
/// What a tool call does to a file. Only the ledger's lists expose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Read,
    Create,
    Modify,
    Delete,
}

/// How deep scripts that run scripts (`bash -c`, `./x.sh`, `source`) are followed.
const MAX_DEPTH: usize = 4;
/// Contents kept for later commands to run or apply: bounded so a long session stays small.
const MAX_KNOWN_CONTENT_BYTES: usize = 256 * 1024;
const MAX_KNOWN_TOTAL_BYTES: usize = 4 * 1024 * 1024;

/// What scanning one command line found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ShellEffects {
    /// File operations in the order the command performs them.
    pub files: Vec<(FileOp, String)>,
    /// The command prints the working tree's changes as a patch (`git diff` against the index
    /// or HEAD), so its output names files that differ from the last commit.
    pub prints_worktree_diff: bool,
}

/// Contents the session wrote to files (through heredocs or file tools), by path as the ledger
/// reports it, so a later command that runs or applies such a file can be followed.
#[derive(Debug, Default)]
pub struct KnownContents {
    by_path: HashMap<String, String>,
    total_bytes: usize,
}

impl KnownContents {
    pub fn remember(&mut self, path: &str, content: &str) {
        if content.len() > MAX_KNOWN_CONTENT_BYTES {
            self.forget(path);
            return;
        }
        if self.total_bytes + content.len() > MAX_KNOWN_TOTAL_BYTES {
            return;
        }
        self.forget(path);
        self.total_bytes += content.len();
        self.by_path.insert(path.to_string(), content.to_string());
    }

    fn forget(&mut self, path: &str) {
        if let Some(old) = self.by_path.remove(path) {
            self.total_bytes -= old.len();
        }
    }

    fn get(&self, path: &str) -> Option<&str> {
        self.by_path.get(path).map(String::as_str)
    }
}

/// Scans a command line. `known` supplies the contents of files written earlier and learns
/// the ones this command writes.
pub fn scan(command: &str, known: &mut KnownContents) -> ShellEffects {
    let mut effects = ShellEffects::default();
    let mut scanner = Scanner {
        known,
        effects: &mut effects,
    };
    scanner.run(command, Cwd::Agent, 0);
    effects
}

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    /// The text after quote removal.
    text: String,
    /// Built from an expansion whose value is unknown (`$X`, `$(…)`, backticks).
    dynamic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedirectKind {
    /// `>`, `>|`, `&>`, `>&file`: truncates or creates the target.
    Write,
    /// `>>`, `&>>`.
    Append,
    /// `<`.
    Read,
    /// `<<`, `<<-`: the body follows the command line.
    Heredoc,
    /// `<<<word`.
    HereString,
    /// `2>&1`, `<&0`, `>&-`: duplicates a descriptor, names no file.
    Duplicate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Redirect {
    kind: RedirectKind,
    target: Word,
    heredoc_body: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    Redirect(Redirect),
    /// `&&`, `||`, `;`, `|`, `&`, newline: ends a simple command.
    Separator,
    OpenSubshell,
    CloseSubshell,
}

struct PendingHeredoc {
    token_index: usize,
    delimiter: String,
    strip_tabs: bool,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    pending_heredocs: Vec<PendingHeredoc>,
}

fn is_metachar(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer {
    fn new(source: &str) -> Self {
        Lexer {
            chars: source.chars().collect(),
            pos: 0,
            tokens: Vec::new(),
            pending_heredocs: Vec::new(),
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn tokenize(mut self) -> Vec<Token> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.tokens.push(Token::Separator);
                    self.read_heredoc_bodies();
                }
                '&' => {
                    if self.peek(1) == Some('&') {
                        self.pos += 2;
                        self.tokens.push(Token::Separator);
                    } else if self.peek(1) == Some('>') {
                        let append = self.peek(2) == Some('>');
                        self.pos += if append { 3 } else { 2 };
                        let kind = if append {
                            RedirectKind::Append
                        } else {
                            RedirectKind::Write
                        };
                        self.push_redirect(kind);
                    } else {
                        self.pos += 1;
                        self.tokens.push(Token::Separator);
                    }
                }
                '|' | ';' => {
                    self.pos += 1;
                    if matches!(self.peek(0), Some('|' | '&' | ';')) {
                        self.pos += 1;
                    }
                    self.tokens.push(Token::Separator);
                }
                '(' => {
                    self.pos += 1;
                    self.tokens.push(Token::OpenSubshell);
                }
                ')' => {
                    self.pos += 1;
                    self.tokens.push(Token::CloseSubshell);
                }
                '<' | '>' => self.read_redirect(),
                c if c.is_ascii_digit() && self.digits_then_redirect() => {
                    while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    self.read_redirect();
                }
                _ => {
                    let word = self.read_word();
                    self.tokens.push(Token::Word(word));
                }
            }
        }
        // A heredoc whose command line ends without a newline has an empty body.
        self.tokens
    }

    fn digits_then_redirect(&self) -> bool {
        let mut offset = 0;
        while self.peek(offset).is_some_and(|c| c.is_ascii_digit()) {
            offset += 1;
        }
        matches!(self.peek(offset), Some('<' | '>'))
    }

    /// At `<` or `>`: reads the operator and its target.
    fn read_redirect(&mut self) {
        let first = self.chars[self.pos];
        self.pos += 1;
        let kind = if first == '>' {
            match self.peek(0) {
                Some('>') => {
                    self.pos += 1;
                    RedirectKind::Append
                }
                Some('|') => {
                    self.pos += 1;
                    RedirectKind::Write
                }
                Some('&') => {
                    self.pos += 1;
                    RedirectKind::Duplicate
                }
                _ => RedirectKind::Write,
            }
        } else {
            match self.peek(0) {
                Some('<') => {
                    self.pos += 1;
                    if self.peek(0) == Some('<') {
                        self.pos += 1;
                        RedirectKind::HereString
                    } else {
                        RedirectKind::Heredoc
                    }
                }
                Some('&') => {
                    self.pos += 1;
                    RedirectKind::Duplicate
                }
                Some('>') => {
                    // `<>`: opens for reading and writing; treat as a read.
                    self.pos += 1;
                    RedirectKind::Read
                }
                _ => RedirectKind::Read,
            }
        };
        if kind == RedirectKind::Heredoc {
            let strip_tabs = self.peek(0) == Some('-');
            if strip_tabs {
                self.pos += 1;
            }
            self.skip_blanks();
            let delimiter = self.read_word();
            self.pending_heredocs.push(PendingHeredoc {
                token_index: self.tokens.len(),
                delimiter: delimiter.text.clone(),
                strip_tabs,
            });
            self.tokens.push(Token::Redirect(Redirect {
                kind,
                target: delimiter,
                heredoc_body: String::new(),
            }));
            return;
        }
        self.push_redirect(kind);
    }

    fn push_redirect(&mut self, kind: RedirectKind) {
        self.skip_blanks();
        let target = self.read_word();
        // `>&file` (no descriptor number) is bash's spelling of `&>file`.
        let kind = match kind {
            RedirectKind::Duplicate
                if !target.text.is_empty()
                    && !target.text.chars().all(|c| c.is_ascii_digit() || c == '-') =>
            {
                RedirectKind::Write
            }
            other => other,
        };
        self.tokens.push(Token::Redirect(Redirect {
            kind,
            target,
            heredoc_body: String::new(),
        }));
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    /// After a newline: the bodies of the heredocs opened on the line just ended.
    fn read_heredoc_bodies(&mut self) {
        for pending in std::mem::take(&mut self.pending_heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.pos < self.chars.len() {
                    self.pos += 1; // the newline
                }
                let line = if pending.strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line.trim_end_matches('\r') == pending.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(Token::Redirect(redirect)) = self.tokens.get_mut(pending.token_index) {
                redirect.heredoc_body = body;
            }
        }
    }

    fn read_word(&mut self) -> Word {
        let mut text = String::new();
        let mut dynamic = false;
        while let Some(c) = self.peek(0) {
            if is_metachar(c) {
                break;
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(escaped) => {
                            text.push(escaped);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        text.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        match c {
                            '"' => {
                                self.pos += 1;
                                break;
                            }
                            '\\' => {
                                self.pos += 1;
                                match self.peek(0) {
                                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                                        text.push(next);
                                        self.pos += 1;
                                    }
                                    Some('\n') => self.pos += 1,
                                    _ => text.push('\\'),
                                }
                            }
                            '$' | '`' => {
                                dynamic |= self.read_expansion(&mut text);
                            }
                            _ => {
                                text.push(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' | '`' => {
                    dynamic |= self.read_expansion(&mut text);
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        Word { text, dynamic }
    }

    /// At `$` or a backtick: copies the expansion's text and says whether it expands anything.
    fn read_expansion(&mut self, text: &mut String) -> bool {
        let c = self.chars[self.pos];
        if c == '`' {
            text.push('`');
            self.pos += 1;
            while let Some(c) = self.peek(0) {
                self.pos += 1;
                text.push(c);
                if c == '\\' {
                    if let Some(next) = self.peek(0) {
                        text.push(next);
                        self.pos += 1;
                    }
                } else if c == '`' {
                    break;
                }
            }
            return true;
        }
        // `$`
        text.push('$');
        self.pos += 1;
        match self.peek(0) {
            Some('(') => {
                self.copy_balanced('(', ')', text);
                true
            }
            Some('{') => {
                self.copy_balanced('{', '}', text);
                true
            }
            Some(c)
                if c.is_ascii_alphanumeric()
                    || matches!(c, '_' | '@' | '*' | '#' | '?' | '!' | '-') =>
            {
                true
            }
            // A lone `$` (before a quote, a space, the end) is literal.
            _ => false,
        }
    }

    /// Copies `open … close` with nesting, skipping quoted text, up to the matching close.
    fn copy_balanced(&mut self, open: char, close: char, text: &mut String) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            text.push(c);
            match c {
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        text.push(next);
                        self.pos += 1;
                    }
                }
                '\'' => {
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        text.push(q);
                        if q == '\'' {
                            break;
                        }
                    }
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Paths and the working directory
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Cwd {
    /// The directory the agent's commands start in: relative paths are reported as relative.
    Agent,
    /// A directory reached by `cd`: absolute, or relative to the agent's directory.
    Known(String),
    /// A `cd` whose target is unknown: relative paths are reported as written.
    Unknown,
}

/// `a/./b/../c/` → `a/c`; keeps a leading `/` and leading `..` components it cannot resolve.
fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

impl Cwd {
    /// The path a word names, as the ledger reports it, or None when it names no file we can
    /// know (an expansion, a device).
    fn resolve(&self, word: &Word) -> Option<String> {
        let path = word.text.as_str();
        if word.dynamic || path.is_empty() || path == "-" {
            return None;
        }
        if path.starts_with("/dev/") || path.starts_with("/proc/") || path == "/dev/null" {
            return None;
        }
        if path.starts_with('/') {
            return Some(normalize(path));
        }
        if path.starts_with('~') {
            return Some(path.to_string());
        }
        match self {
            Cwd::Agent => Some(normalize(path)),
            Cwd::Known(dir) => Some(normalize(&format!("{dir}/{path}"))),
            Cwd::Unknown => Some(path.to_string()),
        }
    }

    fn after_cd(&self, target: Option<&Word>) -> Cwd {
        let Some(target) = target else {
            return Cwd::Unknown; // `cd` alone goes home
        };
        let path = target.text.as_str();
        if target.dynamic || path.is_empty() || path == "-" || path.starts_with('~') {
            return Cwd::Unknown;
        }
        if path.starts_with('/') {
            return Cwd::Known(normalize(path));
        }
        match self {
            Cwd::Agent => Cwd::Known(normalize(path)),
            Cwd::Known(dir) => Cwd::Known(normalize(&format!("{dir}/{path}"))),
            Cwd::Unknown => Cwd::Unknown,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct SimpleCommand {
    words: Vec<Word>,
    redirects: Vec<Redirect>,
}

struct Scanner<'k, 'e> {
    known: &'k mut KnownContents,
    effects: &'e mut ShellEffects,
}

/// Words that start a command but are not its name.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
    "esac",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

impl Scanner<'_, '_> {
    fn record(&mut self, op: FileOp, path: String) {
        self.effects.files.push((op, path));
    }

    fn record_word(&mut self, op: FileOp, cwd: &Cwd, word: &Word) {
        if let Some(path) = cwd.resolve(word) {
            self.record(op, path);
        }
    }

    fn run(&mut self, script: &str, start: Cwd, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let tokens = Lexer::new(script).tokenize();
        let mut cwd = start;
        let mut subshell_cwds: Vec<Cwd> = Vec::new();
        let mut current = SimpleCommand::default();
        for token in tokens {
            match token {
                Token::Word(word) => current.words.push(word),
                Token::Redirect(redirect) => current.redirects.push(redirect),
                Token::Separator | Token::OpenSubshell | Token::CloseSubshell => {
                    let command = std::mem::take(&mut current);
                    self.simple_command(command, &mut cwd, depth);
                    match token {
                        Token::OpenSubshell => subshell_cwds.push(cwd.clone()),
                        Token::CloseSubshell => {
                            if let Some(outer) = subshell_cwds.pop() {
                                cwd = outer;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        self.simple_command(current, &mut cwd, depth);
    }

    fn simple_command(&mut self, command: SimpleCommand, cwd: &mut Cwd, depth: usize) {
        // Redirections first: they happen whatever the command is.
        let mut stdin: Option<String> = None;
        let mut stdout_files: Vec<String> = Vec::new();
        for redirect in &command.redirects {
            match redirect.kind {
                RedirectKind::Write | RedirectKind::Append => {
                    if let Some(path) = cwd.resolve(&redirect.target) {
                        let op = if redirect.kind == RedirectKind::Write {
                            FileOp::Create
                        } else {
                            FileOp::Modify
                        };
                        self.record(op, path.clone());
                        stdout_files.push(path);
                    }
                }
                RedirectKind::Read => {
                    if let Some(path) = cwd.resolve(&redirect.target) {
                        stdin = self.known.get(&path).map(str::to_string);
                        self.record(FileOp::Read, path);
                    }
                }
                RedirectKind::Heredoc => stdin = Some(redirect.heredoc_body.clone()),
                RedirectKind::HereString => stdin = Some(format!("{}\n", redirect.target.text)),
                RedirectKind::Duplicate => {}
            }
        }

        let mut words: &[Word] = &command.words;
        // Keywords, assignments and wrappers that run the rest of the line as a command.
        loop {
            let Some(first) = words.first() else { return };
            let name = first.text.as_str();
            if KEYWORDS.contains(&name) || is_assignment(name) {
                words = &words[1..];
            } else if matches!(name, "for" | "case" | "select" | "function") {
                return;
            } else if matches!(
                name,
                "sudo" | "env" | "command" | "nohup" | "exec" | "nice" | "timeout" | "stdbuf"
            ) {
                words = &words[1..];
                // Their own options (and `timeout`'s duration) come before the command.
                while let Some(next) = words.first() {
                    let text = next.text.as_str();
                    let is_option = text.starts_with('-') && text.len() > 1;
                    let is_duration =
                        name == "timeout" && text.starts_with(|c: char| c.is_ascii_digit());
                    let takes_value = matches!(
                        text,
                        "-u" | "-g" | "-n" | "-s" | "-k" | "-o" | "-e" | "-i" | "-I" | "-d"
                    );
                    if is_option || is_duration || is_assignment(text) {
                        words = &words[1..];
                        if takes_value && name != "env" {
                            words = words.get(1..).unwrap_or(&[]);
                        }
                    } else {
                        break;
                    }
                }
            } else {
                break;
            }
        }
        let Some((name_word, args)) = words.split_first() else {
            return;
        };
        if name_word.dynamic {
            return;
        }
        let name = basename(&name_word.text);

        // `cat > f <<EOF`, `tee f <<EOF`: the file now holds the heredoc's body.
        if let Some(body) = &stdin {
            if name == "cat" && args.is_empty() {
                for path in &stdout_files {
                    self.known.remember(path, body);
                }
            }
        }

        match name {
            "cd" | "pushd" => {
                let target = args
                    .iter()
                    .find(|w| !w.text.starts_with('-') || w.text == "-");
                *cwd = cwd.after_cd(target);
            }
            "popd" => *cwd = Cwd::Unknown,
            "rm" | "unlink" => {
                for word in operands(args, &[]) {
                    self.record_word(FileOp::Delete, cwd, word);
                }
            }
            "touch" => {
                for word in operands(args, &["-d", "-t", "-r", "--date", "--reference"]) {
                    self.record_word(FileOp::Create, cwd, word);
                }
            }
            "tee" => {
                let append = args.iter().any(|w| w.text == "-a" || w.text == "--append");
                let op = if append {
                    FileOp::Modify
                } else {
                    FileOp::Create
                };
                for word in operands(args, &[]) {
                    if let Some(path) = cwd.resolve(word) {
                        if let (Some(body), false) = (&stdin, append) {
                            self.known.remember(&path, body);
                        }
                        self.record(op, path);
                    }
                }
            }
            "sed" => self.sed(args, cwd),
            "perl" => self.perl(args, cwd),
            "mv" => self.move_or_copy(args, cwd, true),
            "cp" => self.move_or_copy(args, cwd, false),
            "git" => self.git(args, cwd, stdin.as_deref()),
            "patch" => self.patch(args, cwd, stdin.as_deref()),
            "apply_patch" | "applypatch" => {
                let text = operands(args, &[]).next().map(|w| w.text.clone()).or(stdin);
                if let Some(text) = text {
                    for (op, path) in codex_patch_files(&text) {
                        self.record_word(op, cwd, &literal(&path));
                    }
                }
            }
            "ed" | "ex" => {
                let writes = stdin.as_deref().is_some_and(|script| {
                    script.lines().any(|line| {
                        let line = line.trim();
                        line == "w" || line == "wq" || line == "x" || line.starts_with("w ")
                    })
                });
                if let (true, Some(file)) = (writes, operands(args, &[]).next()) {
                    self.record_word(FileOp::Modify, cwd, file);
                }
            }
            "cat" | "head" | "tail" | "nl" | "less" | "more" => {
                for word in operands(args, &["-n", "-c", "--lines", "--bytes"]) {
                    self.record_word(FileOp::Read, cwd, word);
                }
            }
            _ if name.starts_with("python") => self.python(args, cwd, stdin.as_deref()),
            _ if SHELLS.contains(&name) || name == "source" || name == "." => {
                self.shell(name, args, cwd, stdin.as_deref(), depth)
            }
            _ if name_word.text.contains('/') => {
                // `./script.sh`: a script the session wrote runs in this directory.
                if let Some(path) = cwd.resolve(name_word) {
                    if let Some(body) = self.known.get(&path).map(str::to_string) {
                        self.run(&body, cwd.clone(), depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn shell(&mut self, name: &str, args: &[Word], cwd: &Cwd, stdin: Option<&str>, depth: usize) {
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            if name != "source" && name != "." && text.starts_with('-') && text.len() > 1 {
                if !text.starts_with("--") && text.contains('c') {
                    // `bash -c SCRIPT`, `bash -lc SCRIPT`.
                    if let Some(script) = args.get(index + 1) {
                        self.run(&script.text, cwd.clone(), depth + 1);
                    }
                    return;
                }
                index += 1;
                continue;
            }
            // `bash script.sh`, `source script.sh`.
            if let Some(path) = cwd.resolve(arg) {
                if let Some(body) = self.known.get(&path).map(str::to_string) {
                    self.run(&body, cwd.clone(), depth + 1);
                }
            }
            return;
        }
        if let Some(script) = stdin {
            self.run(script, cwd.clone(), depth + 1);
        }
    }

    fn sed(&mut self, args: &[Word], cwd: &Cwd) {
        let mut in_place = false;
        let mut have_script = false;
        let mut files = Vec::new();
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            index += 1;
            if text == "--" {
                files.extend(args[index..].iter());
                break;
            }
            if let Some(long) = text.strip_prefix("--") {
                if long.starts_with("in-place") {
                    in_place = true;
                } else if long == "expression" || long == "file" {
                    have_script = true;
                    index += 1;
                } else if long.starts_with("expression=") || long.starts_with("file=") {
                    have_script = true;
                }
                continue;
            }
            if text.starts_with('-') && text.len() > 1 {
                let flags = &text[1..];
                // In a cluster, `i` takes the rest as its backup suffix; `e` and `f` take the
                // next word (or the rest of the cluster) as the script.
                for (at, flag) in flags.char_indices() {
                    match flag {
                        'i' => {
                            in_place = true;
                            // BSD sed: `-i ''` (an empty suffix as its own word).
                            if at + 1 == flags.len()
                                && args.get(index).is_some_and(|next| next.text.is_empty())
                            {
                                index += 1;
                            }
                            break;
                        }
                        'e' | 'f' => {
                            have_script = true;
                            if at + 1 == flags.len() {
                                index += 1;
                            }
                            break;
                        }
                        'l' if at + 1 == flags.len() => {
                            index += 1;
                            break;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if !have_script {
                have_script = true;
                continue;
            }
            files.push(arg);
        }
        let op = if in_place {
            FileOp::Modify
        } else {
            FileOp::Read
        };
        for word in files {
            self.record_word(op, cwd, word);
        }
    }

    fn perl(&mut self, args: &[Word], cwd: &Cwd) {
        let mut in_place = false;
        let mut have_code = false;
        let mut files = Vec::new();
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            index += 1;
            if text == "--" {
                files.extend(args[index..].iter());
                break;
            }
            if text.starts_with('-') && text.len() > 1 {
                for (at, flag) in text[1..].char_indices() {
                    match flag {
                        // `-i.bak`: the rest of the cluster is the backup suffix.
                        'i' => {
                            in_place = true;
                            break;
                        }
                        'e' | 'E' => {
                            have_code = true;
                            if at + 2 == text.len() {
                                index += 1; // the code is the next word
                            }
                            break;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if !have_code {
                have_code = true; // the program file
                continue;
            }
            files.push(arg);
        }
        if in_place {
            for word in files {
                self.record_word(FileOp::Modify, cwd, word);
            }
        }
    }

    /// `mv a b`, `mv a b c dir/`, `mv -t dir a b` (and the same for `cp`, which keeps sources).
    fn move_or_copy(&mut self, args: &[Word], cwd: &Cwd, removes_sources: bool) {
        let mut target_dir: Option<Word> = None;
        let mut paths: Vec<&Word> = Vec::new();
        let mut index = 0;
        let mut options_done = false;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            index += 1;
            if options_done || !text.starts_with('-') || text.len() == 1 {
                paths.push(arg);
            } else if text == "--" {
                options_done = true;
            } else if text == "-t" || text == "--target-directory" {
                target_dir = args.get(index).cloned();
                index += 1;
            } else if let Some(dir) = text.strip_prefix("--target-directory=") {
                target_dir = Some(Word {
                    text: dir.to_string(),
                    dynamic: arg.dynamic,
                });
            } else if text == "-S" || text == "--suffix" {
                index += 1;
            }
        }
        let (sources, destination, into_directory) = match &target_dir {
            Some(dir) => (&paths[..], dir, true),
            None => match paths.split_last() {
                Some((destination, sources)) if !sources.is_empty() => (
                    sources,
                    *destination,
                    sources.len() > 1 || destination.text.ends_with('/'),
                ),
                _ => return,
            },
        };
        for source in sources {
            let destination_path = if into_directory {
                let name = basename(source.text.trim_end_matches('/'));
                Word {
                    text: format!("{}/{}", destination.text.trim_end_matches('/'), name),
                    dynamic: destination.dynamic || source.dynamic,
                }
            } else {
                destination.clone()
            };
            self.move_one(cwd, source, &destination_path, removes_sources);
        }
    }

    fn move_one(&mut self, cwd: &Cwd, source: &Word, destination: &Word, removes_source: bool) {
        let source_path = cwd.resolve(source);
        let destination_path = cwd.resolve(destination);
        if let (Some(from), Some(to)) = (&source_path, &destination_path) {
            if let Some(body) = self.known.get(from).map(str::to_string) {
                self.known.remember(to, &body);
            }
        }
        if removes_source {
            if let Some(from) = source_path {
                self.record(FileOp::Delete, from);
            }
        }
        if let Some(to) = destination_path {
            self.record(FileOp::Create, to);
        }
    }

    fn git(&mut self, args: &[Word], cwd: &Cwd, stdin: Option<&str>) {
        // Global options come before the subcommand; `-C dir` runs it in another directory.
        let mut cwd = cwd.clone();
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            match arg.text.as_str() {
                "-C" => {
                    cwd = cwd.after_cd(args.get(index + 1));
                    index += 2;
                }
                "-c" | "--git-dir" | "--work-tree" | "--namespace" => index += 2,
                text if text.starts_with('-') => index += 1,
                _ => break,
            }
        }
        let Some(subcommand) = args.get(index) else {
            return;
        };
        let rest = &args[index + 1..];
        let has = |flag: &str| rest.iter().any(|w| w.text == flag);
        match subcommand.text.as_str() {
            "rm" if !has("--cached") => {
                for word in operands(rest, &[]) {
                    self.record_word(FileOp::Delete, &cwd, word);
                }
            }
            "mv" => self.move_or_copy(rest, &cwd, true),
            "restore" => {
                let worktree = has("--worktree") || has("-W") || !(has("--staged") || has("-S"));
                if worktree {
                    for word in operands(rest, &["-s", "--source"]) {
                        self.record_word(FileOp::Modify, &cwd, word);
                    }
                }
            }
            "checkout" => {
                // `git checkout -- paths` restores files; without `--` a branch name and a
                // file name look alike, so only words that look like files count.
                let after_dashes = rest.iter().position(|w| w.text == "--");
                let paths: Vec<&Word> = match after_dashes {
                    Some(at) => rest[at + 1..].iter().collect(),
                    None => operands(rest, &["-b", "-B"])
                        .filter(|w| looks_like_file(&w.text))
                        .collect(),
                };
                for word in paths {
                    self.record_word(FileOp::Modify, &cwd, word);
                }
            }
            "apply" => {
                if ["--check", "--stat", "--numstat", "--summary"]
                    .iter()
                    .any(|flag| has(flag))
                {
                    return;
                }
                let strip = strip_option(rest).unwrap_or(1);
                let patch_files: Vec<&Word> =
                    operands(rest, &["-p", "--directory", "--exclude", "--include"]).collect();
                let mut texts = Vec::new();
                for word in &patch_files {
                    if let Some(path) = cwd.resolve(word) {
                        self.record(FileOp::Read, path.clone());
                        if let Some(body) = self.known.get(&path) {
                            texts.push(body.to_string());
                        }
                    }
                }
                if patch_files.is_empty() {
                    texts.extend(stdin.map(str::to_string));
                }
                for text in texts {
                    for (op, path) in diff_files(&text, Some(strip)) {
                        self.record_word(op, &cwd, &literal(&path));
                    }
                }
            }
            "diff" if worktree_diff(rest) => self.effects.prints_worktree_diff = true,
            _ => {}
        }
    }

    fn patch(&mut self, args: &[Word], cwd: &Cwd, stdin: Option<&str>) {
        if args.iter().any(|w| w.text == "--dry-run") {
            return;
        }
        let strip = strip_option(args);
        let mut patch_file: Option<&Word> = None;
        let mut positional = Vec::new();
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            index += 1;
            if text == "-i" || text == "--input" {
                patch_file = args.get(index);
                index += 1;
            } else if text.starts_with("--input=") {
                patch_file = Some(arg);
            } else if matches!(
                text,
                "-p" | "-d" | "-o" | "-r" | "-B" | "-D" | "-F" | "-V" | "-z"
            ) {
                index += 1;
            } else if text.starts_with('-') && text.len() > 1 {
            } else {
                positional.push(arg);
            }
        }
        // `patch FILE [PATCHFILE]` names the file it changes.
        if let Some(target) = positional.first() {
            self.record_word(FileOp::Modify, cwd, target);
            if patch_file.is_none() {
                patch_file = positional.get(1).copied();
            }
            if let Some(file) = patch_file {
                self.record_word(FileOp::Read, cwd, file);
            }
            return;
        }
        let text = match patch_file {
            Some(file) => {
                let word = match file.text.strip_prefix("--input=") {
                    Some(value) => literal(value),
                    None => file.clone(),
                };
                cwd.resolve(&word).and_then(|path| {
                    self.record(FileOp::Read, path.clone());
                    self.known.get(&path).map(str::to_string)
                })
            }
            None => stdin.map(str::to_string),
        };
        if let Some(text) = text {
            for (op, path) in diff_files(&text, strip) {
                self.record_word(op, cwd, &literal(&path));
            }
        }
    }

    /// `python -c CODE`, `python - <<EOF`, `python script.py` (a script the session wrote):
    /// files the code opens for writing by a literal name.
    fn python(&mut self, args: &[Word], cwd: &Cwd, stdin: Option<&str>) {
        let mut code: Option<String> = None;
        let mut index = 0;
        while let Some(arg) = args.get(index) {
            let text = arg.text.as_str();
            index += 1;
            if text == "-c" {
                code = args.get(index).map(|w| w.text.clone());
                break;
            }
            if text == "-m" {
                break; // a module: nothing to read
            }
            if text == "-" {
                code = stdin.map(str::to_string);
                break;
            }
            if text.starts_with('-') {
                continue;
            }
            code = cwd
                .resolve(arg)
                .and_then(|path| self.known.get(&path).map(str::to_string));
            break;
        }
        if let Some(code) = code {
            for path in python_written_files(&code) {
                self.record_word(FileOp::Modify, cwd, &literal(&path));
            }
        }
    }
}

fn literal(text: &str) -> Word {
    Word {
        text: text.to_string(),
        dynamic: false,
    }
}

/// The operands of a command: words that are not options, and everything after `--`. Options
/// listed in `with_value` take the next word as their value.
fn operands<'w>(
    args: &'w [Word],
    with_value: &'w [&'w str],
) -> impl Iterator<Item = &'w Word> + 'w {
    let mut options_done = false;
    let mut skip_next = false;
    args.iter().filter(move |word| {
        if skip_next {
            skip_next = false;
            return false;
        }
        let text = word.text.as_str();
        if options_done {
            return true;
        }
        if text == "--" {
            options_done = true;
            return false;
        }
        if text.starts_with('-') && text.len() > 1 {
            skip_next = with_value.contains(&text);
            return false;
        }
        true
    })
}

/// `-p1`, `-p 1`, `--strip=1`.
fn strip_option(args: &[Word]) -> Option<usize> {
    for (index, arg) in args.iter().enumerate() {
        let text = arg.text.as_str();
        let value = if text == "-p" || text == "--strip" {
            args.get(index + 1).map(|w| w.text.as_str())
        } else if let Some(value) = text.strip_prefix("--strip=") {
            Some(value)
        } else if text.starts_with("-p") && text.len() > 2 {
            Some(&text[2..])
        } else {
            None
        };
        if let Some(level) = value.and_then(|v| v.parse().ok()) {
            return Some(level);
        }
    }
    None
}

fn looks_like_file(text: &str) -> bool {
    // `src/app.py`, `setup.cfg`: a name with an extension (branch names rarely have one).
    let name = basename(text);
    !text.contains("..") && name.contains('.') && !name.starts_with('.')
}

/// `git diff` compares the working tree (or the index) with the index or HEAD only when it is
/// given no revisions: options, `HEAD`, and pathspecs after `--`.
fn worktree_diff(args: &[Word]) -> bool {
    for word in args {
        let text = word.text.as_str();
        if text == "--" {
            return true;
        }
        if text == "--no-index" {
            return false;
        }
        if text.starts_with('-') || text == "HEAD" {
            continue;
        }
        return false;
    }
    true
}

/// Files named by a unified diff (`git diff`, `diff -u`, a `.patch`): the `diff --git` headers
/// when present, else the `---`/`+++` pairs. `strip` drops leading path components as
/// `patch -pN` does; without it, git's `a/` and `b/` prefixes are dropped.
pub fn diff_files(text: &str, strip: Option<usize>) -> Vec<(FileOp, String)> {
    let strip_path = |path: &str| -> Option<String> {
        let path = path.split('\t').next().unwrap_or(path).trim();
        let path = path.trim_matches('"');
        if path.is_empty() || path == "/dev/null" {
            return None;
        }
        match strip {
            Some(level) => {
                let parts: Vec<&str> = path.split('/').collect();
                if level >= parts.len() {
                    return None;
                }
                Some(parts[level..].join("/"))
            }
            None => Some(
                path.strip_prefix("a/")
                    .or_else(|| path.strip_prefix("b/"))
                    .unwrap_or(path)
                    .to_string(),
            ),
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if let Some(header) = line.strip_prefix("diff --git ") {
            let (mut old, mut new) = split_git_header(header);
            let mut op = FileOp::Modify;
            let mut renamed = false;
            index += 1;
            while index < lines.len()
                && !lines[index].starts_with("diff --git ")
                && !lines[index].starts_with("@@")
            {
                let header_line = lines[index];
                if header_line.starts_with("new file mode") {
                    op = FileOp::Create;
                } else if header_line.starts_with("deleted file mode") {
                    op = FileOp::Delete;
                } else if let Some(from) = header_line.strip_prefix("rename from ") {
                    renamed = true;
                    old = format!("a/{from}");
                } else if let Some(to) = header_line.strip_prefix("rename to ") {
                    renamed = true;
                    new = format!("b/{to}");
                }
                index += 1;
            }
            let old = strip_path(&old);
            let new = strip_path(&new);
            match (op, renamed) {
                (FileOp::Delete, _) => files.extend(old.map(|p| (FileOp::Delete, p))),
                (_, true) => {
                    files.extend(old.map(|p| (FileOp::Delete, p)));
                    files.extend(new.map(|p| (FileOp::Create, p)));
                }
                (op, false) => files.extend(new.map(|p| (op, p))),
            }
            continue;
        }
        if let (Some(old), Some(new)) = (
            line.strip_prefix("--- "),
            lines
                .get(index + 1)
                .and_then(|next| next.strip_prefix("+++ ")),
        ) {
            let old_is_null = old.split('\t').next().unwrap_or("").trim() == "/dev/null";
            let new_is_null = new.split('\t').next().unwrap_or("").trim() == "/dev/null";
            if new_is_null {
                files.extend(strip_path(old).map(|p| (FileOp::Delete, p)));
            } else {
                let op = if old_is_null {
                    FileOp::Create
                } else {
                    FileOp::Modify
                };
                files.extend(strip_path(new).map(|p| (op, p)));
            }
            index += 2;
            continue;
        }
        index += 1;
    }
    files
}

/// `a/x b/x` → (`a/x`, `b/x`), also when the names contain ` b/`.
fn split_git_header(header: &str) -> (String, String) {
    // The common case: the same path on both sides, so the halves mirror each other.
    if header.len() % 2 == 1 {
        let middle = header.len() / 2;
        if header.is_char_boundary(middle) && header.as_bytes()[middle] == b' ' {
            let (old, new) = (&header[..middle], &header[middle + 1..]);
            if old.get(2..) == new.get(2..) {
                return (old.to_string(), new.to_string());
            }
        }
    }
    match header.rfind(" b/") {
        Some(at) => (header[..at].to_string(), header[at + 1..].to_string()),
        None => match header.split_once(' ') {
            Some((old, new)) => (old.to_string(), new.to_string()),
            None => (header.to_string(), header.to_string()),
        },
    }
}

/// Files named by a Codex `apply_patch` envelope (`*** Add File: p`, `*** Update File: p`,
/// `*** Delete File: p`, `*** Move to: p`), as codex-rs/apply-patch/src/parser.rs defines it.
pub fn codex_patch_files(text: &str) -> Vec<(FileOp, String)> {
    let mut files = Vec::new();
    let mut updating: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            files.push((FileOp::Create, path.trim().to_string()));
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            files.push((FileOp::Delete, path.trim().to_string()));
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let path = path.trim().to_string();
            files.push((FileOp::Modify, path.clone()));
            updating = Some(path);
            continue;
        } else if let Some(destination) = line.strip_prefix("*** Move to: ") {
            // A move rewrites the updated file under its new name and removes the old one.
            if let Some(source) = updating.take() {
                if let Some(last) = files.last_mut() {
                    if last.1 == source {
                        *last = (FileOp::Delete, source);
                    }
                }
            }
            files.push((FileOp::Create, destination.trim().to_string()));
        }
        updating = None;
    }
    files
}

/// Files Python code opens for writing by a literal name: `open("f", "w")`,
/// `Path("f").write_text(…)`.
fn python_written_files(code: &str) -> Vec<String> {
    static PATTERNS: OnceLock<[Regex; 2]> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            Regex::new(
                r#"open\(\s*[rb]?["']([^"'\n]+)["']\s*,\s*(?:mode\s*=\s*)?[rb]?["'][^"'\n]*[wax+][^"'\n]*["']"#,
            )
            .expect("valid regex"),
            Regex::new(r#"Path\(\s*[rb]?["']([^"'\n]+)["']\s*\)\s*\.\s*write_(?:text|bytes)\("#)
                .expect("valid regex"),
        ]
    });
    let mut files = Vec::new();
    for pattern in patterns {
        for captures in pattern.captures_iter(code) {
            if let Some(path) = captures.get(1) {
                let path = path.as_str().to_string();
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
    }
    files
}

/// A command array (Codex `shell`/`local_shell`: `["bash", "-lc", "…"]`, or
/// `["apply_patch", "…"]`) as one command line: the script of a `sh -c` form, else the words
/// quoted and joined.
pub fn command_line_of_argv(argv: &[&str]) -> String {
    if let [shell, flag, script, ..] = argv {
        if SHELLS.contains(&basename(shell)) && flag.starts_with('-') && flag.contains('c') {
            return script.to_string();
        }
    }
    argv.iter()
        .map(|word| quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use FileOp::*;

    fn files(command: &str) -> Vec<(FileOp, String)> {
        scan(command, &mut KnownContents::default()).files
    }

    fn written(command: &str) -> Vec<(FileOp, String)> {
        files(command)
            .into_iter()
            .filter(|(op, _)| *op != Read)
            .collect()
    }

    fn pairs(items: &[(FileOp, &str)]) -> Vec<(FileOp, String)> {
        items.iter().map(|(op, p)| (*op, p.to_string())).collect()
    }

    // From mini-gemini3-pytest-6197 (call_2): the heredoc's body is a script, not commands of
    // this line, and the file it writes is remembered.
    #[test]
    fn heredoc_to_file_creates_the_file_and_not_what_its_body_mentions() {
        let command = "cat <<'EOF' > reproduce_issue.sh\n#!/bin/bash\nmkdir -p foobar\necho 'assert False' > foobar/__init__.py\necho 'def test_foo(): pass' > test_foo.py\n\n# Run pytest\npytest\nEOF\nchmod +x reproduce_issue.sh";
        assert_eq!(written(command), pairs(&[(Create, "reproduce_issue.sh")]));
    }

    // call_2 then call_3 of the same session: running the script the session wrote reports
    // what the script writes.
    #[test]
    fn running_a_script_the_session_wrote_scans_its_body() {
        let mut known = KnownContents::default();
        scan(
            "cat <<'EOF' > reproduce_issue_isolated.sh\n#!/bin/bash\nmkdir -p reproduction\ncd reproduction\nmkdir -p foobar\necho 'assert False' > foobar/__init__.py\necho 'def test_foo(): pass' > test_foo.py\npytest -c /dev/null\nEOF\nchmod +x reproduce_issue_isolated.sh",
            &mut known,
        );
        let effects = scan("./reproduce_issue_isolated.sh", &mut known);
        assert_eq!(
            effects.files,
            pairs(&[
                (Create, "reproduction/foobar/__init__.py"),
                (Create, "reproduction/test_foo.py")
            ])
        );
        // The same within one command line (call_67), and through `bash x.sh`.
        let effects = scan(
            "cat <<'EOF' > check_dupes.sh\nmkdir -p dupetests\necho \"def test_a(): pass\" > dupetests/test_a.py\nEOF\nchmod +x check_dupes.sh\nbash check_dupes.sh",
            &mut known,
        );
        assert_eq!(
            effects.files,
            pairs(&[(Create, "check_dupes.sh"), (Create, "dupetests/test_a.py")])
        );
    }

    // From mini-gemini3-requests-1142 (call_29): `&&` chains and quoting with newlines.
    #[test]
    fn sed_in_place_in_an_and_chain() {
        let command = r#"sed -i 's/import collections/import collections\ntry:\n    from collections.abc import MutableMapping\nexcept ImportError:\n    from collections import MutableMapping/' requests/cookies.py && sed -i 's/collections.MutableMapping/MutableMapping/g' requests/cookies.py"#;
        assert_eq!(
            files(command),
            pairs(&[
                (Modify, "requests/cookies.py"),
                (Modify, "requests/cookies.py")
            ])
        );
    }

    #[test]
    fn sed_forms() {
        // pytest-6197 call_35: an `i\` command in single quotes with a backslash.
        assert_eq!(
            files(
                r#"sed -i '521i\                                    print(f"DEBUG: pkginit={pkginit}, new_col={new_col}")' src/_pytest/main.py"#
            ),
            pairs(&[(Modify, "src/_pytest/main.py")])
        );
        // pytest-6197 call_49: escaped slashes and a `\\n` inside the script.
        assert_eq!(
            files(
                r#"sed -i 's/import sys; print(f"DEBUG: Package.collect {self.fspath}", file=sys.stderr)/with open("\/tmp\/debug.txt", "a") as f: f.write(f"DEBUG: Package.collect {self.fspath}\\n")/' src/_pytest/python.py"#
            ),
            pairs(&[(Modify, "src/_pytest/python.py")])
        );
        assert_eq!(
            files("sed -i.bak -e 's/a/b/' -e 's/c/d/' a.txt b.txt"),
            pairs(&[(Modify, "a.txt"), (Modify, "b.txt")])
        );
        assert_eq!(
            files("sed -i '' 's/a/b/' mac.txt"),
            pairs(&[(Modify, "mac.txt")])
        );
        assert_eq!(
            files("sed --in-place=.orig 's/a/b/' x.c"),
            pairs(&[(Modify, "x.c")])
        );
        // pytest-6197 call_12: `sed -n` in a pipeline reads nothing of its own; `nl` reads.
        assert_eq!(
            files("nl -ba src/_pytest/python.py | sed -n '559,650p'"),
            pairs(&[(Read, "src/_pytest/python.py")])
        );
        assert_eq!(files("sed -n '1,20p' a.py"), pairs(&[(Read, "a.py")]));
    }

    #[test]
    fn cd_makes_relative_paths_relative_to_it() {
        assert_eq!(
            files("cd /testbed && sed -i 's/a/b/' src/x.py && cd sub && rm ../old.py"),
            pairs(&[(Modify, "/testbed/src/x.py"), (Delete, "/testbed/old.py")])
        );
        assert_eq!(
            files("cd reproduction; touch a.py"),
            pairs(&[(Create, "reproduction/a.py")])
        );
        // Unknown targets leave paths as written.
        assert_eq!(files("cd $REPO && touch a.py"), pairs(&[(Create, "a.py")]));
        // A subshell's cd ends with it.
        assert_eq!(
            files("(cd /tmp && touch t.txt) && touch here.txt"),
            pairs(&[(Create, "/tmp/t.txt"), (Create, "here.txt")])
        );
    }

    #[test]
    fn redirections() {
        assert_eq!(
            files("echo hi > out.txt 2>&1; echo more >> log.txt; cmd &> /dev/null; cmd 2>/dev/null >&2"),
            pairs(&[(Create, "out.txt"), (Modify, "log.txt")])
        );
        assert_eq!(
            files("make >build.log 2>err.log"),
            pairs(&[(Create, "build.log"), (Create, "err.log")])
        );
        assert_eq!(files("cmd &>all.log"), pairs(&[(Create, "all.log")]));
        assert_eq!(files("echo \"a > b\" 'c > d'"), vec![]);
        assert_eq!(files("echo $OUT > \"$FILE\""), vec![]);
        assert_eq!(files("python - <<EOF\nprint('> not.a.file')\nEOF"), vec![]);
    }

    #[test]
    fn tee_touch_rm_mv_cp() {
        assert_eq!(
            files("echo x | tee -a notes.md other.md >/dev/null"),
            pairs(&[(Modify, "notes.md"), (Modify, "other.md")])
        );
        assert_eq!(
            files("touch -d yesterday a b"),
            pairs(&[(Create, "a"), (Create, "b")])
        );
        // requests-1142 call_51.
        assert_eq!(
            files("rm reproduce_issue.py check_overwrite.py apply_fix.py"),
            pairs(&[
                (Delete, "reproduce_issue.py"),
                (Delete, "check_overwrite.py"),
                (Delete, "apply_fix.py")
            ])
        );
        assert_eq!(
            files("rm -rf build/ -- -odd"),
            pairs(&[(Delete, "build"), (Delete, "-odd")])
        );
        assert_eq!(
            files("mv old.py new.py"),
            pairs(&[(Delete, "old.py"), (Create, "new.py")])
        );
        assert_eq!(
            files("mv a.py b.py pkg/"),
            pairs(&[
                (Delete, "a.py"),
                (Create, "pkg/a.py"),
                (Delete, "b.py"),
                (Create, "pkg/b.py")
            ])
        );
        assert_eq!(
            files("cp -r src/a.py /tmp/a.py"),
            pairs(&[(Create, "/tmp/a.py")])
        );
        assert_eq!(
            files("git mv -f x.rs y.rs && git rm -q z.rs && git rm --cached keep.rs"),
            pairs(&[(Delete, "x.rs"), (Create, "y.rs"), (Delete, "z.rs")])
        );
    }

    #[test]
    fn git_restores_and_diffs() {
        // requests-1142 call_56.
        assert_eq!(
            files("git checkout requests/packages/urllib3/connectionpool.py"),
            pairs(&[(Modify, "requests/packages/urllib3/connectionpool.py")])
        );
        assert_eq!(files("git checkout main"), vec![]);
        assert_eq!(
            files("git checkout -- Makefile"),
            pairs(&[(Modify, "Makefile")])
        );
        assert_eq!(files("git restore --staged a.py"), vec![]);
        assert_eq!(files("git restore a.py"), pairs(&[(Modify, "a.py")]));
        let mut known = KnownContents::default();
        // requests-1142 call_69.
        assert!(
            scan(
                "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
                &mut known
            )
            .prints_worktree_diff
        );
        assert!(scan("git diff", &mut known).prints_worktree_diff);
        assert!(scan("git diff HEAD -- src/", &mut known).prints_worktree_diff);
        assert!(!scan("git diff main..feature", &mut known).prints_worktree_diff);
        assert!(!scan("git log -p", &mut known).prints_worktree_diff);
    }

    #[test]
    fn patches_from_heredocs_and_files() {
        let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(
            files(&format!("patch -p1 <<'EOF'\n{patch}EOF")),
            pairs(&[(Modify, "src/lib.rs"), (Create, "src/new.rs")])
        );
        assert_eq!(
            files(&format!("cd /repo && git apply <<'EOF'\n{patch}EOF")),
            pairs(&[(Modify, "/repo/src/lib.rs"), (Create, "/repo/src/new.rs")])
        );
        // A patch file written earlier, applied later.
        let mut known = KnownContents::default();
        scan(&format!("cat > fix.diff <<'EOF'\n{patch}EOF"), &mut known);
        assert_eq!(
            scan("patch -p1 < fix.diff", &mut known).files,
            pairs(&[
                (Read, "fix.diff"),
                (Modify, "src/lib.rs"),
                (Create, "src/new.rs")
            ])
        );
        assert_eq!(scan("git apply --check fix.diff", &mut known).files, vec![]);
        assert_eq!(
            files("patch src/x.c < x.patch"),
            pairs(&[(Read, "x.patch"), (Modify, "src/x.c")])
        );
    }

    #[test]
    fn codex_apply_patch_heredoc() {
        let command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n-a\n+b\n*** Update File: README.md\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\nEOF\n";
        assert_eq!(
            files(command),
            pairs(&[
                (Create, "hello.txt"),
                (Delete, "src/app.py"),
                (Create, "src/main.py"),
                (Modify, "README.md"),
                (Delete, "old.txt")
            ])
        );
        // Codex's command array, as a command line.
        let argv = [
            "bash",
            "-lc",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: gone.rs\n*** End Patch\nEOF",
        ];
        assert_eq!(
            files(&command_line_of_argv(&argv)),
            pairs(&[(Delete, "gone.rs")])
        );
        let argv = [
            "apply_patch",
            "*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch",
        ];
        assert_eq!(
            files(&command_line_of_argv(&argv)),
            pairs(&[(Create, "a.md")])
        );
    }

    #[test]
    fn ed_perl_python_and_nested_shells() {
        // pytest-6197 call_29.
        assert_eq!(
            files("ed src/_pytest/main.py <<EOF\n514a\n    if not col:\n.\nw\nq\nEOF"),
            pairs(&[(Modify, "src/_pytest/main.py")])
        );
        assert_eq!(
            files("perl -pi -e 's/a/b/' x.pl y.pl && perl -i.bak -pe 's/c/d/g' z.txt"),
            pairs(&[(Modify, "x.pl"), (Modify, "y.pl"), (Modify, "z.txt")])
        );
        assert_eq!(files("perl -ne 'print' r.txt"), vec![]);
        // pytest-6197 call_30 (shortened): python writes by a literal name.
        assert_eq!(
            files("python3 -c '\nlines = open(\"src/_pytest/main.py\").readlines()\nwith open(\"src/_pytest/main.py\", \"w\") as f:\n    f.writelines(lines)\n' < src/_pytest/main.py"),
            pairs(&[(Read, "src/_pytest/main.py"), (Modify, "src/_pytest/main.py")])
        );
        assert_eq!(
            files("sh -c 'touch inner.txt' && bash -lc \"rm -f gone.txt\""),
            pairs(&[(Create, "inner.txt"), (Delete, "gone.txt")])
        );
        assert_eq!(
            files("sudo -u root env FOO=1 timeout 10 touch wrapped.txt"),
            pairs(&[(Create, "wrapped.txt")])
        );
    }

    #[test]
    fn comments_keywords_and_continuations() {
        assert_eq!(
            files("# rm -rf everything\nif true; then touch yes.txt; fi # > no.txt\nfor f in *.py; do rm \"$f\"; done"),
            pairs(&[(Create, "yes.txt")])
        );
        assert_eq!(
            files("rm \\\n  a.txt \\\n  b.txt"),
            pairs(&[(Delete, "a.txt"), (Delete, "b.txt")])
        );
        assert_eq!(
            files("rm 'my file.txt' my\\ other.txt"),
            pairs(&[(Delete, "my file.txt"), (Delete, "my other.txt")])
        );
        assert_eq!(files("echo $(rm x) `touch y`"), vec![]);
    }

    #[test]
    fn git_diff_output_names_changed_files() {
        let output = "diff --git a/build/lib/x.py b/build/lib/x.py\nnew file mode 100644\nindex 0000000..7ea7e62\n--- /dev/null\n+++ b/build/lib/x.py\n@@ -0,0 +1 @@\n+x\ndiff --git a/requests/models.py b/requests/models.py\nindex 1..2 100644\n--- a/requests/models.py\n+++ b/requests/models.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/old.txt b/old.txt\ndeleted file mode 100644\ndiff --git a/a b.txt b/c.txt\nsimilarity index 90%\nrename from a b.txt\nrename to c.txt\n";
        assert_eq!(
            diff_files(output, None),
            pairs(&[
                (Create, "build/lib/x.py"),
                (Modify, "requests/models.py"),
                (Delete, "old.txt"),
                (Delete, "a b.txt"),
                (Create, "c.txt")
            ])
        );
    }

    #[test]
    fn normalizes_paths() {
        assert_eq!(normalize("./a/./b/../c/"), "a/c");
        assert_eq!(normalize("/x/../../y"), "/y");
        assert_eq!(normalize("../up"), "../up");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn never_panics_on_any_text(text in any::<String>()) {
            let mut known = KnownContents::default();
            let _ = scan(&text, &mut known);
            let _ = diff_files(&text, Some(1));
            let _ = codex_patch_files(&text);
        }

        #[test]
        fn never_panics_on_shell_like_text(
            text in proptest::collection::vec(
                proptest::sample::select(vec![
                    " ", "\n", "'", "\"", "\\", "$", "$(", "`", "(", ")", "{", "}", ";", "&", "&&",
                    "|", "||", ">", ">>", "<", "<<", "<<-", "<<<", "2>&1", "&>", ">&", "EOF", "cat",
                    "sed", "-i", "mv", "cp", "rm", "cd", "git", "apply", "patch", "-p1", "bash",
                    "-c", "./x.sh", "x.sh", "a/b", "..", "#", "tee", "python3", "-", "perl", "-pi",
                    "-e", "ed", "w", "*** Add File: f", "--- a/f", "+++ b/f", "diff --git a/f b/f",
                ]),
                0..40,
            ).prop_map(|parts| parts.concat())
        ) {
            let mut known = KnownContents::default();
            // Twice, so the second scan runs scripts the first one wrote.
            let _ = scan(&text, &mut known);
            let _ = scan(&text, &mut known);
        }
    }
}
