//! The lexer: a command line as words, control operators, redirections and heredocs.
//!
//! It knows quoting ('…', "…", backslashes), comments, `&&` `||` `;` `|` `&` newlines, subshell
//! parentheses, redirections and heredocs; a heredoc's body is kept as data, never as commands.
//! Expansions (`$X`, `$(…)`, backticks) make a word dynamic: its value is unknown, so it is never
//! reported as a path.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text after quote removal.
    pub(crate) text: String,
    /// Built from an expansion whose value is unknown (`$X`, `$(…)`, backticks).
    pub(crate) dynamic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
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
pub(crate) struct Redirect {
    pub(crate) kind: RedirectKind,
    pub(crate) target: Word,
    pub(crate) heredoc_body: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
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

pub(crate) struct Lexer {
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
    pub(crate) fn new(source: &str) -> Self {
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

    pub(crate) fn tokenize(mut self) -> Vec<Token> {
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
