//! The pretokenizers of `o200k_base` and `cl100k_base`, written by hand.
//!
//! Before byte-pair encoding, tiktoken splits text into pieces with one regular expression per
//! encoding, and BPE never merges across pieces, so the split decides the count as much as the
//! merges do. bpe-openai runs tiktoken's patterns with `regex-automata`, rewriting the negative
//! look-ahead `\s+(?!\S)` as the two patterns `\s+\s` (whose last character is then dropped from
//! the match) and `\s+`, with `\s+$` added before them for the end of the text. Searching with
//! that regex was half of the time spent counting, so this module does the same split by hand,
//! piece by piece, following the alternatives exactly as the regex engine's leftmost-first
//! (backtracking-order) semantics does: at each position the first alternative that matches
//! wins, and within it greedy repetitions take as much as they can while the rest still
//! matches. The alternatives, in order:
//!
//! `o200k_base`:
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`
//! 6. `\s+$`, then `\s+\s` minus its last character, then `\s+`
//!
//! `cl100k_base`:
//! 1. `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
//! 2. `[^\r\n\p{L}\p{N}]?\p{L}+`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
//! 5. `\s*[\r\n]+`
//! 6. `\s+$`, then `\s+\s` minus its last character, then `\s+`
//!
//! What backtracking means for them:
//! - The optional prefix `[^\r\n\p{L}\p{N}]?` is first tried consuming one character, and only
//!   if the rest of the alternative then fails, without it.
//! - The two letter classes of `o200k_base` overlap in `Lm`, `Lo` and `M`. For
//!   `[U]*[L]+`, `[U]*` first takes the longest run of `U` characters and gives characters back
//!   until `[L]+` can start: the match starts its `L` run at the last position `j` (at most the
//!   end of the `U` run) whose character is in `L`, and that run is then as long as it can be.
//!   `[U]+[L]*` always succeeds once one `U` character is there.
//! - `\s*[\r\n]+` ends right after the last `\r` or `\n` of the run of white space.
//! - The contractions are case-insensitive with Unicode simple case folding: besides `S`,
//!   U+017F LATIN SMALL LETTER LONG S (`ſ`) matches `s`. No other letter of the contractions
//!   folds to a non-ASCII character (the tests check this against `regex-syntax`).
//! - Only alternative 6 sees the end of the text: `$` is the end of the whole text.
//!
//! The split depends on a character only through its membership in the eight classes the
//! patterns name (`\p{L}`, `\p{N}`, `\s`, `[\r\n]`, the two letter classes and the two negated
//! classes) and on the few characters they spell out (`'`, ` `, `\r`, `\n`, `/`, the contraction
//! letters). The classes are parsed at first use (about 1 ms) by `regex-syntax`, the parser
//! `regex-automata` compiles the patterns with, so both always use the same Unicode tables; a
//! flat table then answers for the Basic Multilingual Plane and a binary search above it.
//!
//! The tests keep the regex as the reference: they check the class of every code point, split
//! representatives of every class in many contexts and generated texts with both, and (in
//! release builds) every code point in context.

use std::sync::LazyLock;

use regex_syntax::hir::{Class, HirKind};

use crate::model::encoding::Encoding;

/// The pieces of `text` for `encoding`, in order; they concatenate to `text`.
pub fn pieces(encoding: Encoding, text: &str) -> Pieces<'_> {
    Pieces {
        classes: &CHAR_CLASSES,
        encoding,
        text,
        position: 0,
    }
}

/// Loads the character tables now rather than on first use.
pub fn preload() {
    LazyLock::force(&CHAR_CLASSES);
}

/// The iterator returned by [`pieces`].
pub struct Pieces<'a> {
    classes: &'static CharClasses,
    encoding: Encoding,
    text: &'a str,
    position: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let start = self.position;
        if start >= self.text.len() {
            return None;
        }
        let text = self.text.as_bytes();
        let end = match self.encoding {
            Encoding::O200kBase => self.classes.o200k_piece_end(text, start),
            Encoding::Cl100kBase => self.classes.cl100k_piece_end(text, start),
        };
        self.position = end;
        Some(&self.text[start..end])
    }
}

// Character class bits: each is one class exactly as it is written in the patterns.
/// `\p{L}`
const LETTER: u8 = 1 << 0;
/// `\p{N}`
const NUMBER: u8 = 1 << 1;
/// `\s` (Unicode `White_Space`)
const SPACE: u8 = 1 << 2;
/// `[\r\n]`
const NEWLINE: u8 = 1 << 3;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, the "upper" class of `o200k_base`.
const UPPERISH: u8 = 1 << 4;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, the "lower" class of `o200k_base`.
const LOWERISH: u8 = 1 << 5;
/// `[^\r\n\p{L}\p{N}]`, the optional one-character prefix of words.
const PREFIX: u8 = 1 << 6;
/// `[^\s\p{L}\p{N}]`, punctuation and everything else.
const PUNCT: u8 = 1 << 7;

/// Each bit and the class it stands for, in `regex-syntax` syntax.
const CLASS_PATTERNS: [(u8, &str); 8] = [
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (NEWLINE, r"[\r\n]"),
    (UPPERISH, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWERISH, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (PREFIX, r"[^\r\n\p{L}\p{N}]"),
    (PUNCT, r"[^\s\p{L}\p{N}]"),
];

const BMP_SIZE: usize = 0x1_0000;

/// The class bits of every code point: a flat table for the Basic Multilingual Plane (which
/// holds nearly all text, and all of ASCII), and intervals of equal bits above it.
struct CharClasses {
    bmp: Box<[u8; BMP_SIZE]>,
    /// Starts of the intervals above the BMP; the first is `0x10000`, the last ends at
    /// `char::MAX`.
    astral_starts: Vec<u32>,
    astral_bits: Vec<u8>,
}

static CHAR_CLASSES: LazyLock<CharClasses> = LazyLock::new(CharClasses::build);

/// The ranges of a character class, parsed as the regex parses it.
fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .expect("valid character class");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|range| (range.start() as u32, range.end() as u32))
            .collect(),
        other => panic!("{pattern} is not a Unicode class: {other:?}"),
    }
}

impl CharClasses {
    fn build() -> CharClasses {
        let classes: Vec<(u8, Vec<(u32, u32)>)> = CLASS_PATTERNS
            .iter()
            .map(|&(bit, pattern)| (bit, class_ranges(pattern)))
            .collect();
        // Every class is constant between consecutive range boundaries.
        let mut boundaries: Vec<u32> = vec![0, BMP_SIZE as u32];
        for (_, ranges) in &classes {
            for &(start, end) in ranges {
                boundaries.push(start);
                boundaries.push(end + 1);
            }
        }
        boundaries.sort_unstable();
        boundaries.dedup();
        boundaries.retain(|&b| b <= char::MAX as u32);
        let bits_at = |code_point: u32| -> u8 {
            classes
                .iter()
                .filter(|(_, ranges)| {
                    let after = ranges.partition_point(|&(start, _)| start <= code_point);
                    after > 0 && ranges[after - 1].1 >= code_point
                })
                .fold(0, |bits, (bit, _)| bits | bit)
        };
        let mut bmp: Box<[u8; BMP_SIZE]> = vec![0u8; BMP_SIZE]
            .into_boxed_slice()
            .try_into()
            .expect("BMP_SIZE bytes");
        let mut astral_starts = Vec::new();
        let mut astral_bits: Vec<u8> = Vec::new();
        for (index, &start) in boundaries.iter().enumerate() {
            let end = boundaries
                .get(index + 1)
                .copied()
                .unwrap_or(char::MAX as u32 + 1);
            let bits = bits_at(start);
            if (start as usize) < BMP_SIZE {
                bmp[start as usize..(end as usize).min(BMP_SIZE)].fill(bits);
            } else if astral_bits.last() != Some(&bits) {
                astral_starts.push(start);
                astral_bits.push(bits);
            }
        }
        CharClasses {
            bmp,
            astral_starts,
            astral_bits,
        }
    }

    #[inline]
    fn astral(&self, code_point: u32) -> u8 {
        let after = self
            .astral_starts
            .partition_point(|&start| start <= code_point);
        self.astral_bits[after - 1]
    }

    /// The class bits and UTF-8 length of the character at byte `index` of `text` (valid
    /// UTF-8, `index` on a character boundary); `(0, 0)` at the end of the text, so that the
    /// end is in no class.
    #[inline(always)]
    fn at(&self, text: &[u8], index: usize) -> (u8, usize) {
        match text.get(index) {
            None => (0, 0),
            Some(&byte) if byte < 0x80 => (self.bmp[byte as usize], 1),
            Some(&lead) => self.multibyte_at(text, index, lead),
        }
    }

    #[inline]
    fn multibyte_at(&self, text: &[u8], index: usize, lead: u8) -> (u8, usize) {
        let continuation = |offset: usize| (text[index + offset] & 0x3F) as u32;
        if lead < 0xE0 {
            let code_point = ((lead & 0x1F) as u32) << 6 | continuation(1);
            (self.bmp[code_point as usize & (BMP_SIZE - 1)], 2)
        } else if lead < 0xF0 {
            let code_point = ((lead & 0x0F) as u32) << 12 | continuation(1) << 6 | continuation(2);
            (self.bmp[code_point as usize & (BMP_SIZE - 1)], 3)
        } else {
            let code_point = ((lead & 0x07) as u32) << 18
                | continuation(1) << 12
                | continuation(2) << 6
                | continuation(3);
            (self.astral(code_point), 4)
        }
    }

    /// The end of the longest run of characters in `class` from `start`.
    #[inline]
    fn run_end(&self, text: &[u8], start: usize, class: u8) -> usize {
        let mut index = start;
        loop {
            let (bits, len) = self.at(text, index);
            if bits & class == 0 {
                return index;
            }
            index += len;
        }
    }

    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` at `start`.
    ///
    /// The starred run gives back characters until the plus can start, so the lower run starts
    /// at the last character of the upper run, or the one right after it, that is lower.
    #[inline]
    fn upper_star_lower_plus(&self, text: &[u8], start: usize) -> Option<usize> {
        let (_, lower_start) = self.upper_run(text, start);
        Some(self.run_end(text, lower_start?, LOWERISH))
    }

    /// Scans the `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*` run at `start`: where it ends, and the
    /// last position in it, or right after it, of a lower character (where `[…]+` of the lower
    /// class can start once the starred run gives characters back).
    #[inline]
    fn upper_run(&self, text: &[u8], start: usize) -> (usize, Option<usize>) {
        let mut index = start;
        let mut lower_start = None;
        loop {
            let (bits, len) = self.at(text, index);
            if bits & LOWERISH != 0 {
                lower_start = Some(index);
            }
            if bits & UPPERISH == 0 {
                return (index, lower_start);
            }
            index += len;
        }
    }

    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` at `start`.
    #[inline]
    fn upper_plus_lower_star(&self, text: &[u8], start: usize) -> Option<usize> {
        if self.at(text, start).0 & UPPERISH == 0 {
            return None;
        }
        let upper_end = self.run_end(text, start, UPPERISH);
        Some(self.run_end(text, upper_end, LOWERISH))
    }

    /// ` ?[^\s\p{L}\p{N}]+` followed by the longest run of `trailing` bytes, at `start`.
    #[inline]
    fn punctuation(&self, text: &[u8], start: usize, trailing: &[u8]) -> Option<usize> {
        let first = if text[start] == b' ' {
            start + 1
        } else {
            start
        };
        if self.at(text, first).0 & PUNCT == 0 {
            return None;
        }
        let mut end = self.run_end(text, first, PUNCT);
        while text.get(end).is_some_and(|byte| trailing.contains(byte)) {
            end += 1;
        }
        Some(end)
    }

    /// `\p{N}{1,3}` at `start`, whose character is a number.
    #[inline]
    fn numbers(&self, text: &[u8], start: usize) -> usize {
        let mut end = start;
        for _ in 0..3 {
            let (bits, len) = self.at(text, end);
            if bits & NUMBER == 0 {
                break;
            }
            end += len;
        }
        end
    }

    /// The white-space alternatives at `start`, whose character is white space:
    /// `\s*[\r\n]+`, then `\s+$`, then `\s+\s` without its last character, then `\s+`.
    fn white_space(&self, text: &[u8], start: usize) -> usize {
        let mut index = start;
        let mut after_last_newline = None;
        let mut last_char_start = start;
        loop {
            let (bits, len) = self.at(text, index);
            if bits & SPACE == 0 {
                break;
            }
            if bits & NEWLINE != 0 {
                after_last_newline = Some(index + len);
            }
            last_char_start = index;
            index += len;
        }
        if let Some(end) = after_last_newline {
            end
        } else if index == text.len() || last_char_start == start {
            index
        } else {
            // Leaves the last white space to start the next piece (`\s+(?!\S)`).
            last_char_start
        }
    }

    /// The end of the `o200k_base` piece that starts at `start` (< `text.len()`).
    #[inline]
    fn o200k_piece_end(&self, text: &[u8], start: usize) -> usize {
        let (first, first_len) = self.at(text, start);
        // Alternatives 1 and 2 (words), tried in order: 1 with the prefix, 1 without, 2 with,
        // 2 without. Only a combining mark is both a prefix and part of a word; for any other
        // character one of the two ways of starting cannot match, and both alternatives from
        // one start are found by one scan.
        let word_end = if first & PREFIX == 0 {
            self.word_end(text, start)
        } else if first & (UPPERISH | LOWERISH) == 0 {
            self.word_end(text, start + first_len)
        } else {
            let after_prefix = start + first_len;
            self.upper_star_lower_plus(text, after_prefix)
                .or_else(|| self.upper_star_lower_plus(text, start))
                .or_else(|| self.upper_plus_lower_star(text, after_prefix))
                .or_else(|| self.upper_plus_lower_star(text, start))
        };
        if let Some(end) = word_end {
            return end + contraction_len(text, end);
        }
        if first & NUMBER != 0 {
            return self.numbers(text, start);
        }
        if let Some(end) = self.punctuation(text, start, b"\r\n/") {
            return end;
        }
        self.white_space_or_char(text, start, first, first_len)
    }

    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+`, or failing that
    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*`, at `start`
    /// (the same as [`Self::upper_star_lower_plus`] or else [`Self::upper_plus_lower_star`]).
    #[inline]
    fn word_end(&self, text: &[u8], start: usize) -> Option<usize> {
        let (index, lower_start) = self.upper_run(text, start);
        match lower_start {
            Some(lower_start) => Some(self.run_end(text, lower_start, LOWERISH)),
            // The upper run is followed by no lower character: the second alternative, whose
            // lower run is empty.
            None if index > start => Some(index),
            None => None,
        }
    }

    /// The end of the `cl100k_base` piece that starts at `start` (< `text.len()`).
    #[inline]
    fn cl100k_piece_end(&self, text: &[u8], start: usize) -> usize {
        let contraction = contraction_len(text, start);
        if contraction > 0 {
            return start + contraction;
        }
        let (first, first_len) = self.at(text, start);
        if first & PREFIX != 0 && self.at(text, start + first_len).0 & LETTER != 0 {
            return self.run_end(text, start + first_len, LETTER);
        }
        if first & LETTER != 0 {
            return self.run_end(text, start, LETTER);
        }
        if first & NUMBER != 0 {
            return self.numbers(text, start);
        }
        if let Some(end) = self.punctuation(text, start, b"\r\n") {
            return end;
        }
        self.white_space_or_char(text, start, first, first_len)
    }

    /// The last alternatives. Every character that reaches them is white space (any other is
    /// a letter, a number or in `[^\s\p{L}\p{N}]`); should one not be, it is a piece of its
    /// own rather than a reason to loop or panic.
    #[inline]
    fn white_space_or_char(&self, text: &[u8], start: usize, first: u8, first_len: usize) -> usize {
        if first & SPACE != 0 {
            self.white_space(text, start)
        } else {
            debug_assert!(false, "no alternative matched at {start}");
            start + first_len
        }
    }
}

/// The length of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `start`, or 0.
#[inline]
fn contraction_len(text: &[u8], start: usize) -> usize {
    if text.get(start) != Some(&b'\'') {
        return 0;
    }
    let lower = |offset: usize| text.get(start + offset).map(|byte| byte | 0x20);
    match lower(1) {
        // `byte | 0x20` is `s` for exactly `s` and `S` (and so on for the other letters).
        Some(b's' | b't' | b'm' | b'd') => 2,
        Some(b'r' | b'v') if lower(2) == Some(b'e') => 3,
        Some(b'l') if lower(2) == Some(b'l') => 3,
        // U+017F LATIN SMALL LETTER LONG S folds to `s`.
        _ if text[start + 1..].starts_with("\u{17F}".as_bytes()) => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex_automata::meta::Regex;
    use regex_automata::{Anchored, Input};

    /// bpe-openai's pretokenizer, as `tokens.rs` ran it before this module: the reference.
    struct RegexSplitter {
        regex: Regex,
    }

    impl RegexSplitter {
        fn new(first: &str) -> RegexSplitter {
            RegexSplitter {
                regex: Regex::new_many(&[first, "\\s+\\s", "\\s+"])
                    .expect("valid pretokenizer patterns"),
            }
        }

        fn for_encoding(encoding: Encoding) -> &'static RegexSplitter {
            static O200K: LazyLock<RegexSplitter> = LazyLock::new(|| {
                RegexSplitter::new(
                    &[
                        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                        "\\p{N}{1,3}",
                        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                        "\\s*[\\r\\n]+",
                        "\\s+$",
                    ]
                    .join("|"),
                )
            });
            static CL100K: LazyLock<RegexSplitter> = LazyLock::new(|| {
                RegexSplitter::new(
                    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$",
                )
            });
            match encoding {
                Encoding::O200kBase => &O200K,
                Encoding::Cl100kBase => &CL100K,
            }
        }

        /// The ends of the pieces, as bpe-openai's `Splits` iterator makes them.
        fn piece_ends(&self, text: &str) -> Vec<usize> {
            let mut ends = Vec::new();
            let mut last = 0;
            while last < text.len() {
                let input = Input::new(&text[last..]).anchored(Anchored::Yes);
                let found = self
                    .regex
                    .search(&input)
                    .expect("the patterns match every non-empty text");
                let mut end = last + found.range().end;
                if found.pattern().as_usize() == 1 {
                    end -= text[last..end].chars().next_back().unwrap().len_utf8();
                }
                assert!(end > last);
                ends.push(end);
                last = end;
            }
            ends
        }
    }

    fn piece_ends(encoding: Encoding, text: &str) -> Vec<usize> {
        let mut end = 0;
        pieces(encoding, text)
            .map(|piece| {
                end += piece.len();
                end
            })
            .collect()
    }

    const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// Panics with the first differing piece when the split differs from the regex's.
    #[track_caller]
    fn assert_same_split(encoding: Encoding, text: &str) {
        let expected = RegexSplitter::for_encoding(encoding).piece_ends(text);
        let actual = piece_ends(encoding, text);
        if expected != actual {
            let split = |ends: &[usize]| -> Vec<String> {
                let mut start = 0;
                ends.iter()
                    .map(|&end| {
                        let piece = format!("{:?}", &text[start..end]);
                        start = end;
                        piece
                    })
                    .collect()
            };
            let same = expected
                .iter()
                .zip(&actual)
                .take_while(|(a, b)| a == b)
                .count();
            let from = same.saturating_sub(2);
            panic!(
                "{encoding:?} splits {:?} differently from the regex at piece {same}:\n  regex: {:?}\n  hand:  {:?}",
                if text.len() > 200 { "(long text)" } else { text },
                &split(&expected)[from..(same + 3).min(expected.len())],
                &split(&actual)[from..(same + 3).min(actual.len())],
            );
        }
    }

    #[test]
    fn examples_split_like_the_regex() {
        for text in [
            "Hello, world! It's 2024; we'LL see'S.",
            "  leading  spaces \n\n\ttabs\r\n  \n  trailing  ",
            "HTTPServer parseJSON XMLHttpRequest ÉCOLE école",
            "don'ſ 'ſ 'S 'RE 'rE 'Ve 'LL 'lL 'D 'x 's'",
            "a\u{301}b \u{301}\u{301} .\u{301}x \u{2b0}\u{2b0}A\u{1c5}x",
            "12345 ١٢٣٤ ²³ 1/2 path/to/file\n/\n//",
            "你好世界，压缩上下文 한국어 العربية 🎉🧑‍💻",
            "\u{b}\u{c}\u{85}\u{a0}\u{2028}\u{2029}\u{3000}\u{1680} x",
            "",
            " ",
            "\n",
            "'",
        ] {
            for encoding in ENCODINGS {
                assert_same_split(encoding, text);
            }
        }
    }

    /// The consequences of backtracking worth knowing, spelled out (and checked against the
    /// regex too).
    #[test]
    fn subtle_cases_split_as_expected() {
        use Encoding::{Cl100kBase as Cl100k, O200kBase as O200k};
        for (encoding, text, expected) in [
            // The upper run gives back its last character when that one is also "lower"
            // (`Lm`, `Lo`, `M`): the modifier letter ends the first word, `A` is the second.
            (O200k, "\u{2B0}A", &["\u{2B0}", "A"][..]),
            (O200k, "AB\u{2B0}C", &["AB\u{2B0}", "C"]),
            (O200k, "ABc", &["ABc"]),
            // A combining mark is tried as the prefix first, then as part of the word.
            (O200k, "\u{301}a", &["\u{301}a"]),
            (O200k, "\u{301}A", &["\u{301}", "A"]),
            (O200k, ".A", &[".A"]),
            // Case-insensitive contractions, with the long s.
            (
                O200k,
                "DON'T we'LL it'\u{17F}",
                &["DON'T", " we'LL", " it'\u{17F}"],
            ),
            (O200k, "'sx", &["'sx"]),
            (Cl100k, "'llama x'sy", &["'ll", "ama", " x", "'s", "y"]),
            // White space: the last newline ends the piece; a run before a word leaves one
            // space to it; at the end of the text the run is one piece.
            (
                O200k,
                "a \n  \n b  c  ",
                &["a", " \n  \n", " b", " ", " c", "  "],
            ),
            (O200k, "x\u{A0}\u{3000}y", &["x", "\u{A0}", "\u{3000}y"]),
            // Numbers go by three, without a leading space; `/` follows punctuation and its
            // newlines in o200k only.
            (O200k, "12345 ²³", &["123", "45", " ", "²³"]),
            (O200k, "a.//\n/b", &["a", ".//\n/", "b"]),
            (Cl100k, "a.//\n/b", &["a", ".//\n", "/b"]),
        ] {
            let pieces: Vec<&str> = pieces(encoding, text).collect();
            assert_eq!(pieces, expected, "{encoding:?} {text:?}");
            assert_same_split(encoding, text);
        }
    }

    #[test]
    fn contraction_letters_fold_only_as_expected() {
        // Unicode simple case folding as the regex applies it: the contractions match exactly
        // these characters, which `contraction_len` checks.
        for (letter, expected) in [
            ('s', "Ss\u{17F}"),
            ('t', "Tt"),
            ('r', "Rr"),
            ('e', "Ee"),
            ('v', "Vv"),
            ('m', "Mm"),
            ('l', "Ll"),
            ('d', "Dd"),
        ] {
            let folded: String = class_ranges(&format!("(?i:[{letter}])"))
                .into_iter()
                .flat_map(|(start, end)| (start..=end).filter_map(char::from_u32))
                .collect();
            assert_eq!(folded, expected, "{letter}");
        }
    }

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=char::MAX as u32).filter_map(char::from_u32)
    }

    /// The table agrees, for every code point, with the classes as `regex-syntax` parses them
    /// (which is what the regex engine compiles), and the engine itself agrees with the table
    /// at and next to every boundary of every class.
    #[test]
    fn class_table_equals_the_regex_classes_for_every_code_point() {
        let classes = &*CHAR_CLASSES;
        let mut buffer = [0u8; 4];
        let classes_with_ranges: Vec<_> = CLASS_PATTERNS
            .iter()
            .map(|&(bit, pattern)| (bit, pattern, class_ranges(pattern)))
            .collect();
        // Walk the ranges of each class alongside the code points instead of searching them.
        let mut next_range = vec![0usize; classes_with_ranges.len()];
        for c in all_chars() {
            let code_point = c as u32;
            let (bits, len) = classes.at(c.encode_utf8(&mut buffer).as_bytes(), 0);
            assert_eq!(len, c.len_utf8());
            for (index, (bit, pattern, ranges)) in classes_with_ranges.iter().enumerate() {
                let next = &mut next_range[index];
                while *next < ranges.len() && ranges[*next].1 < code_point {
                    *next += 1;
                }
                let in_class = *next < ranges.len() && ranges[*next].0 <= code_point;
                assert_eq!(bits & bit != 0, in_class, "{pattern} at U+{code_point:04X}");
            }
        }
        for (bit, pattern, ranges) in &classes_with_ranges {
            let regex = Regex::new(&format!("^{pattern}$")).unwrap();
            for &(start, end) in ranges {
                for code_point in [start.wrapping_sub(1), start, end, end + 1] {
                    let Some(c) = char::from_u32(code_point) else {
                        continue;
                    };
                    let text = c.encode_utf8(&mut buffer);
                    assert_eq!(
                        classes.at(text.as_bytes(), 0).0 & bit != 0,
                        regex.is_match(&*text),
                        "{pattern} at U+{code_point:04X}"
                    );
                }
            }
        }
    }

    /// Characters that stand for all others. The split depends on a character only through
    /// its class bits (checked for every code point above) and on the ASCII characters and
    /// `ſ` the patterns name, so these are: every code point below U+0250, and for each
    /// combination of class bits and each UTF-8 length, the first, the last and a few
    /// between, plus the characters named in the module documentation.
    fn representatives() -> Vec<char> {
        let classes = &*CHAR_CLASSES;
        let mut by_kind: std::collections::BTreeMap<(u8, usize), Vec<char>> = Default::default();
        for c in all_chars() {
            let mut buffer = [0u8; 4];
            let kind = classes.at(c.encode_utf8(&mut buffer).as_bytes(), 0);
            by_kind.entry(kind).or_default().push(c);
        }
        let mut chosen: Vec<char> = ('\0'..'\u{250}').collect();
        for members in by_kind.values() {
            let step = (members.len() / 5).max(1);
            chosen.extend(members.iter().step_by(step));
            chosen.push(*members.last().unwrap());
        }
        chosen.extend(NAMED_CHARS);
        chosen.sort_unstable();
        chosen.dedup();
        chosen
    }

    /// Characters the patterns treat in ways worth checking one by one: case folding (K),
    /// titlecase, modifier letters, marks, other digits, every kind of white space, CJK,
    /// Hangul, Arabic, emoji parts, and the last planes.
    #[rustfmt::skip]
    const NAMED_CHARS: [char; 21] = [
        '\u{212A}', '\u{1C5}', '\u{2B0}', '\u{301}', '\u{903}', '\u{660}', '\u{B2}',
        '\u{85}', '\u{A0}', '\u{1680}', '\u{2028}', '\u{2029}', '\u{3000}', '你', '한',
        'ع', '🎉', '\u{200D}', '\u{FE0F}', '\u{E0100}', '\u{10FFFF}',
    ];

    /// Short texts around which the representatives are put.
    #[rustfmt::skip]
    const CONTEXTS: [&str; 34] = [
        "a", "A", "z", "1", "123", " ", "  ", "\t", "\n", "\r\n", " \n", "\n ", "'", "'s", "'S",
        "'ll", "'Re", "'\u{17F}", ".", "..", "/", " .", " a", " 1", "\u{301}", "\u{2B0}",
        "\u{1C5}", "你", "\u{17F}", "\u{212A}", "\u{A0}", "\u{3000}", "\u{B2}", "🎉",
    ];

    #[test]
    fn representatives_in_every_context_split_like_the_regex() {
        let representatives = representatives();
        for encoding in ENCODINGS {
            for &c in &representatives {
                let c = c.to_string();
                assert_same_split(encoding, &c);
                assert_same_split(encoding, &format!("{c}{c}"));
                for context in CONTEXTS {
                    assert_same_split(encoding, &format!("{context}{c}"));
                    assert_same_split(encoding, &format!("{c}{context}"));
                    assert_same_split(encoding, &format!("{context}{c}{context}"));
                    assert_same_split(encoding, &format!("{c}{context}{c}"));
                }
            }
        }
    }

    /// Every code point next to each context, in long texts (one per context and side, with
    /// a separator that varies the surroundings further). Slow without optimizations; the
    /// two tests above cover the same ground faster.
    #[test]
    #[cfg_attr(debug_assertions, ignore = "slow in debug builds: run with --release")]
    fn every_code_point_in_context_splits_like_the_regex() {
        // First the classes: the runs of each class the regex engine finds in the text of all
        // code points in order are the table's runs.
        let text: String = all_chars().collect();
        let bytes = text.as_bytes();
        for (bit, pattern) in CLASS_PATTERNS {
            let regex = Regex::new(&format!("(?:{pattern})+")).unwrap();
            let expected: Vec<(usize, usize)> = regex
                .find_iter(&text)
                .map(|found| (found.start(), found.end()))
                .collect();
            let mut actual = Vec::new();
            let mut index = 0;
            while index < bytes.len() {
                let end = CHAR_CLASSES.run_end(bytes, index, bit);
                if end > index {
                    actual.push((index, end));
                    index = end;
                } else {
                    index += CHAR_CLASSES.at(bytes, index).1;
                }
            }
            assert!(expected == actual, "the table differs from {pattern}");
        }
        for encoding in ENCODINGS {
            for context in [
                "", "a", "A", " ", "  ", "\n", "1", "'", "'s", ".", "\u{301}", "你",
            ] {
                for (before, after) in [(context, ""), ("", context), (context, context)] {
                    for separator in ["0x", " ", "\u{17F}'"] {
                        let mut text = String::new();
                        for c in all_chars() {
                            text.push_str(before);
                            text.push(c);
                            text.push_str(after);
                            text.push_str(separator);
                        }
                        assert_same_split(encoding, &text);
                    }
                }
            }
        }
    }

    /// Pieces of text biased to what the patterns treat specially.
    #[rustfmt::skip]
    const ATOMS: &[&str] = &[
        "a", "e", "s", "t", "x", "A", "E", "S", "T", "X", "the", "Hello", "HTTP", "don", "0",
        "7", "42", "12345", "'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'Re",
        "'rE", "'VE", "'M", "'LL", "'lL", "'D", "'x", "\u{17F}", "'\u{17F}", "\u{212A}",
        "\u{1C5}", "\u{2B0}", "\u{301}", "\u{903}", "你", "好", "한", "국", "ع", "ر", "\u{660}",
        "\u{B2}", "🎉", "🧑\u{200D}💻", " ", " ", " ", "\t", "\n", "\r", "\r\n", "\u{B}",
        "\u{C}", "\u{85}", "\u{A0}", "\u{2028}", "\u{2029}", "\u{3000}", "\u{1680}", ".", ",",
        "!", "?", "-", "_", "(", ")", "{", "}", "\"", ":", "/", "//", "\\", "#", "*", "É", "é",
        "ß", "Ω", "ω", "\u{1D400}", "\u{10400}", "\u{10428}",
    ];

    fn biased_text(max_atoms: usize) -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            9 => proptest::sample::select(ATOMS).prop_map(str::to_string),
            1 => "\\PC",
        ];
        proptest::collection::vec(atom, 0..max_atoms).prop_map(|atoms| atoms.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]
        #[test]
        fn generated_text_splits_like_the_regex(text in biased_text(40)) {
            for encoding in ENCODINGS {
                assert_same_split(encoding, &text);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// The reference is the pretokenizer bpe-openai itself runs.
        #[test]
        fn the_reference_splits_like_bpe_openai(text in biased_text(40)) {
            for (encoding, tokenizer) in [
                (Encoding::O200kBase, bpe_openai::o200k_base()),
                (Encoding::Cl100kBase, bpe_openai::cl100k_base()),
            ] {
                let mut end = 0;
                let ends: Vec<usize> = tokenizer
                    .split(&text)
                    .map(|piece| {
                        end += piece.len();
                        end
                    })
                    .collect();
                prop_assert_eq!(RegexSplitter::for_encoding(encoding).piece_ends(&text), ends);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]
        #[test]
        fn long_generated_text_splits_like_the_regex(text in biased_text(3_000)) {
            for encoding in ENCODINGS {
                assert_same_split(encoding, &text);
            }
        }

        #[test]
        fn any_text_splits_like_the_regex(text in "\\PC{0,300}") {
            for encoding in ENCODINGS {
                assert_same_split(encoding, &text);
            }
        }
    }
}
