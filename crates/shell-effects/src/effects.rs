//! The scanner: what the commands of a lexed line do to files.
//!
//! It follows `cd` within one line (a subshell's `cd` ends with the subshell), knows the file
//! effects of the common commands (`sed -i`, `mv`, `cp`, `rm`, `tee`, `patch`, `git apply`,
//! `python -c`, …), runs scripts the session wrote earlier (`./x.sh`, `bash -c`, `source`) up to
//! a bounded depth, and reads patches applied from files it knows.

use std::sync::OnceLock;

use regex::Regex;

use crate::lexer::{Lexer, Redirect, RedirectKind, Token, Word};
use crate::patches::{codex_patch_files, diff_files};
use crate::{FileOp, KnownContents, ShellEffects, MAX_DEPTH};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cwd {
    /// The directory the agent's commands start in: relative paths are reported as relative.
    Agent,
    /// A directory reached by `cd`: absolute, or relative to the agent's directory.
    Known(String),
    /// A `cd` whose target is unknown: relative paths are reported as written.
    Unknown,
}

/// `a/./b/../c/` → `a/c`; keeps a leading `/` and leading `..` components it cannot resolve.
pub(crate) fn normalize(path: &str) -> String {
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

pub(crate) struct Scanner<'k, 'e> {
    pub(crate) known: &'k mut KnownContents,
    pub(crate) effects: &'e mut ShellEffects,
}

/// Words that start a command but are not its name.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
    "esac",
];
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

pub(crate) fn basename(path: &str) -> &str {
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

    pub(crate) fn run(&mut self, script: &str, start: Cwd, depth: usize) {
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
