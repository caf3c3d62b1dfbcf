//! Shortening and flattening text the library writes into its own lines: a ledger entry, a
//! failure's line, a task, an error message, a transcript's long tool output. Each place once had
//! its own copy of these; they live here so that "at most N characters, then `…`" means the same
//! everywhere, and always cuts between characters, never inside one (the input is any UTF-8:
//! tool output, file contents, model text).

/// The first `max_chars` characters of `text` (all of it when shorter).
pub fn head(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// At most `max_chars` characters of `text`, with `…` after them when it was cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    let kept = head(text, max_chars);
    if kept.len() == text.len() {
        text.to_string()
    } else {
        format!("{kept}…")
    }
}

/// Runs of whitespace (line breaks included) as one space, trimmed: a text on one line.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Shortens text to about `max_chars`, keeping its head and tail and saying how much was cut:
/// the start of a long output says what ran, its end how it finished.
pub fn clip_middle(text: &str, max_chars: usize) -> String {
    if max_chars == usize::MAX || text.len() <= max_chars {
        return text.to_string();
    }
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return text.to_string();
    }
    let keep_head = max_chars * 2 / 3;
    let keep_tail = max_chars - keep_head;
    let head: String = text.chars().take(keep_head).collect();
    let tail: String = text.chars().skip(total_chars - keep_tail).collect();
    format!(
        "{head}\n[… {} characters omitted …]\n{tail}",
        total_chars - keep_head - keep_tail
    )
}

/// Sentences (or lines) of a text, roughly: split at line breaks, CJK sentence ends and `. `,
/// trimmed, the ones of three bytes or fewer dropped.
pub fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '。', '！', '？'])
        .flat_map(|line| line.split(". "))
        .map(str::trim)
        .filter(|s| s.len() > 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_respects_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("a", 0), "…");
        assert_eq!(head("日本語", 2), "日本");
    }

    #[test]
    fn collapsing_puts_text_on_one_line() {
        assert_eq!(
            collapse_whitespace("<html>\n  <body>x</body>\n</html>"),
            "<html> <body>x</body> </html>"
        );
        assert_eq!(collapse_whitespace("  \n "), "");
    }

    #[test]
    fn clip_middle_keeps_head_and_tail() {
        let text = "a".repeat(100) + &"b".repeat(100);
        let clipped = clip_middle(&text, 30);
        assert!(clipped.starts_with(&"a".repeat(20)));
        assert!(clipped.ends_with(&"b".repeat(10)));
        assert!(clipped.contains("170 characters omitted"));
        assert_eq!(clip_middle("short", 30), "short");
        assert_eq!(clip_middle(&text, usize::MAX), text);
    }

    #[test]
    fn sentences_split_at_sentence_ends_in_both_scripts() {
        let found: Vec<&str> = sentences("We decided. Use tokio\n决定用它。好的！ok").collect();
        // "ok" is too short to be a sentence.
        assert_eq!(found, ["We decided", "Use tokio", "决定用它", "好的"]);
    }
}
