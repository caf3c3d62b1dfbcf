//! The byte-pair encoders: OpenAI's vocabularies, embedded compressed (1.0 MB for `o200k_base`,
//! 0.5 MB for `cl100k_base`), read into a rank table on first use, and tiktoken's merge rule.
//!
//! Why not prebuilt tables: `bpe-openai` serialises automata built at compile time, 32 MB for
//! o200k and 15 MB for cl100k (24 MB gzipped), four fifths of the addon every install carries;
//! building those automata at run time takes over a second. A rank table is what tiktoken itself
//! keeps: it is built in milliseconds, and the piece counts the counter remembers (`tokens.rs`)
//! make the merge's cost matter only for the few thousand distinct pieces of a conversation.
//! Nothing is downloaded: the vocabularies are in the binary.
//!
//! `data/<encoding>.bin.gz` is OpenAI's `<encoding>.tiktoken` (a token's bytes in base64 and its
//! rank on each line, ranks 0, 1, 2, … in order) with each token written as its length (one
//! byte) and its bytes, gzipped: 40 % smaller than the gzipped `.tiktoken`, and read without
//! base64. The tests rebuild the `.tiktoken` text from it and check the SHA-256 tiktoken checks
//! its downloads against. Made with:
//!
//! ```text
//! python3 -c 'import base64,gzip,sys; t=[base64.b64decode(l.split()[0]) for l in open(sys.argv[1],"rb") if l.strip()]; open(sys.argv[2],"wb").write(gzip.compress(b"".join(bytes([len(x)])+x for x in t),9,mtime=0))' o200k_base.tiktoken o200k_base.bin.gz
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Read;
use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use crate::model::encoding::Encoding;

/// `o200k_base.tiktoken` (openaipublic.blob.core.windows.net), in the form described above.
static O200K_BASE: &[u8] = include_bytes!("../../data/o200k_base.bin.gz");
/// `cl100k_base.tiktoken`, likewise.
static CL100K_BASE: &[u8] = include_bytes!("../../data/cl100k_base.bin.gz");

static O200K_RANKS: LazyLock<Ranks> = LazyLock::new(|| Ranks::from_gz(O200K_BASE));
static CL100K_RANKS: LazyLock<Ranks> = LazyLock::new(|| Ranks::from_gz(CL100K_BASE));

/// The encoding's ranks, read on first use.
pub fn ranks(encoding: Encoding) -> &'static Ranks {
    match encoding {
        Encoding::O200kBase => &O200K_RANKS,
        Encoding::Cl100kBase => &CL100K_RANKS,
    }
}

/// Pieces at least this long are merged with a heap (O(n log n)) rather than tiktoken's scan
/// (O(n²), faster for the short pieces nearly all text is made of). Both merge the same pairs.
const HEAP_MERGE_MIN_BYTES: usize = 128;

/// A vocabulary: every token's bytes and its rank (its id, which is also its merge priority).
pub struct Ranks {
    ranks: FxHashMap<&'static [u8], u32>,
}

impl Ranks {
    /// Reads a vocabulary: each token's length (one byte) and bytes, in rank order, gzipped.
    /// The data is compiled in, so a malformed file is a build defect: it panics (the tests
    /// read both files).
    fn from_gz(gz: &[u8]) -> Ranks {
        let mut data = Vec::with_capacity(gz.len() * 2);
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut data)
            .expect("the embedded vocabulary is valid gzip");
        // Kept for the life of the process (the table is a static), so that the keys are plain
        // slices of it.
        let data: &'static [u8] = Box::leak(data.into_boxed_slice());
        let mut ranks = FxHashMap::with_capacity_and_hasher(data.len() / 7, Default::default());
        let mut at = 0;
        while at < data.len() {
            let len = data[at] as usize;
            let token = &data[at + 1..at + 1 + len];
            ranks.insert(token, ranks.len() as u32);
            at += 1 + len;
        }
        Ranks { ranks }
    }

    /// The number of tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Whether the vocabulary is empty (never, for the embedded ones).
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    #[inline]
    fn rank(&self, bytes: &[u8]) -> u32 {
        self.ranks.get(bytes).copied().unwrap_or(u32::MAX)
    }

    /// The number of tokens tiktoken encodes one pretokenized piece into: the whole piece if
    /// it is a token, otherwise the bytes merged pair by pair, always the adjacent pair whose
    /// merge has the lowest rank, the leftmost of equal ones, until no adjacent pair is a token.
    pub fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 || self.ranks.contains_key(piece) {
            return piece.len().min(1);
        }
        if piece.len() < HEAP_MERGE_MIN_BYTES {
            self.count_by_scan(piece)
        } else {
            self.count_by_heap(piece)
        }
    }

    /// tiktoken's `byte_pair_merge`: `parts[i]` is a part's start and the rank of the merge of
    /// the part with the next one.
    fn count_by_scan(&self, piece: &[u8]) -> usize {
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        let mut min = (u32::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        let rank_at = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        while min.0 != u32::MAX {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = rank_at(&parts, i - 1);
            }
            parts[i].1 = rank_at(&parts, i);
            parts.remove(i + 1);
            min = (u32::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts.len() - 1
    }

    /// The same merges as [`Ranks::count_by_scan`], the lowest (rank, start) first, kept in a
    /// heap over a linked list of parts; a heap entry whose part has gone or whose rank has
    /// changed since it was pushed is skipped.
    fn count_by_heap(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // Parts are named by their start byte; `next[i]` is the start of the following part
        // (`n` past the last), `prev[i]` of the preceding one; `rank[i]` is the rank of the merge
        // of part `i` with the next one; a merged-away part has `alive[i] == false`.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut rank = vec![u32::MAX; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            rank[i] = self.rank(&piece[i..i + 2]);
            if rank[i] != u32::MAX {
                heap.push(Reverse((rank[i], i)));
            }
        }
        let pair_rank = |next: &[usize], i: usize| {
            let j = next[i];
            if j >= n {
                return u32::MAX;
            }
            self.rank(&piece[i..next[j]])
        };
        let mut parts = n;
        while let Some(Reverse((r, i))) = heap.pop() {
            if !alive[i] || rank[i] != r {
                continue;
            }
            // Merge part `i` with the next one.
            let j = next[i];
            alive[j] = false;
            next[i] = next[j];
            if next[j] < n {
                prev[next[j]] = i;
            }
            parts -= 1;
            rank[i] = pair_rank(&next, i);
            if rank[i] != u32::MAX {
                heap.push(Reverse((rank[i], i)));
            }
            if i > 0 {
                let p = prev[i];
                rank[p] = pair_rank(&next, p);
                if rank[p] != u32::MAX {
                    heap.push(Reverse((rank[p], p)));
                }
            }
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::Engine;

    /// The `.tiktoken` text the vocabulary was made from: each token in base64, a space, its
    /// rank, a newline.
    fn tiktoken_text(gz: &[u8]) -> Vec<u8> {
        let mut data = Vec::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut data)
            .unwrap();
        let (mut text, mut at, mut rank) = (Vec::new(), 0, 0);
        while at < data.len() {
            let len = data[at] as usize;
            let token = &data[at + 1..at + 1 + len];
            text.extend(
                base64::engine::general_purpose::STANDARD
                    .encode(token)
                    .bytes(),
            );
            text.extend(format!(" {rank}\n").bytes());
            at += 1 + len;
            rank += 1;
        }
        text
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        ring::digest::digest(&ring::digest::SHA256, bytes)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn the_embedded_vocabularies_are_openais_files() {
        // The hashes tiktoken checks its downloads against (tiktoken_ext/openai_public.py).
        assert_eq!(
            sha256_hex(&tiktoken_text(O200K_BASE)),
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
        );
        assert_eq!(
            sha256_hex(&tiktoken_text(CL100K_BASE)),
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
        );
        assert_eq!(ranks(Encoding::O200kBase).len(), 199_998);
        assert_eq!(ranks(Encoding::Cl100kBase).len(), 100_256);
    }

    #[test]
    fn every_token_counts_one_and_single_bytes_are_tokens() {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let ranks = ranks(encoding);
            for byte in 0..=255u8 {
                assert_eq!(ranks.count(&[byte]), 1);
            }
            for token in ranks.ranks.keys() {
                assert_eq!(ranks.count(token), 1);
            }
            assert_eq!(ranks.count(b""), 0);
        }
    }

    #[test]
    fn heap_and_scan_merge_alike() {
        let texts: [&[u8]; 6] = [
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"                                                                       x",
            "你好世界压缩上下文🎉🧑‍💻".as_bytes(),
            b"QmFzZTY0ZW5jb2RlZHRleHRoZXJlQmFzZTY0ZW5jb2RlZHRleHRoZXJl",
            b"!!!!!!!!!!!!======------......,,,,,,;;;;;;''''''\"\"\"\"",
            b"antidisestablishmentarianismpneumonoultramicroscopicsilicovolcanoconiosis",
        ];
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let ranks = ranks(encoding);
            for text in texts {
                for end in 2..text.len() {
                    let piece = &text[..end];
                    assert_eq!(
                        ranks.count_by_heap(piece),
                        ranks.count_by_scan(piece),
                        "{:?}",
                        String::from_utf8_lossy(piece)
                    );
                }
            }
        }
    }
}
