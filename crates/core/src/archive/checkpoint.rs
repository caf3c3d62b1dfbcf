//! Checkpoints (SPEC §4.11): what a compaction did, kept where the session's archives are, so
//! that a later call — in this process or another one sharing the archive location — whose list
//! starts with the same messages gets the same summary message back without an LLM call.
//!
//! A checkpoint says which prefix of the list it covers, by content: [`PrefixHashes`] chains a
//! SHA-256 over the JSON of each message as read (key order, numbers and unknown fields
//! included), so a later list is recognised message by message whatever objects hold it, and
//! any change to a covered message — a character, a key, the order of keys — is another prefix.
//! Beside the prefix it keeps the summary message exactly as the result held it (opaque JSON:
//! this layer never looks inside), the head length and the archive of the covered messages.
//!
//! Layout, in the session's directory beside the archives (or under its key prefix on an
//! object store), so that one listing finds both:
//!
//! ```text
//! checkpoint-<sha-256 of the covered prefix, hex>.json
//! ```
//!
//! A checkpoint is written create-only (a no-clobber link on disk, `PutMode::Create` on a
//! store), as the sequence-number claims are: two writers covering the same prefix cannot
//! overwrite each other — the first one stays, the second finds the name taken and leaves it —
//! and a reader never sees a partial file. Nothing ever modifies a checkpoint.
//!
//! Create-only also means a file planted under a checkpoint's name stays (SPEC §11). So a
//! checkpoint found in the location is a claim, checked before it is reused: here, that it is a
//! regular file (a symlink is never followed) of bounded size, of this version, naming the
//! prefix it is named for and an archive still there ([`find_in`] reports every one set aside
//! and why); in the pipeline, that its message has the library's shape, belongs to the session
//! (its record and the archive's metadata name it) and was written with the same summarizer
//! configuration ([`SummarizerConfig`]).

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::archive::store::{ArchiveStore, StoreError};
use crate::archive::{name_of, parse_archive_name, validate_session_id};

/// What the name of a checkpoint file starts with (`checkpoint-<prefix>.json`).
pub const CHECKPOINT_FILE_PREFIX: &str = "checkpoint-";

/// The format of a checkpoint file. 2: the session and the summarizer configuration are
/// recorded (checkpoints of version 1 are set aside: nothing says who wrote them).
pub const CHECKPOINT_VERSION: u32 = 2;

/// Checkpoint files larger than this are not read (a summary message is a few KB; its user
/// messages and files sections are bounded by token budgets).
pub const MAX_CHECKPOINT_BYTES: u64 = 8 * 1024 * 1024;

/// What the chain starts from: a checkpoint of one format never matches a list of another.
const CHAIN_SEED: &str = "context-compact checkpoint prefix v1\n";

/// The identity of the prefixes of a list: `hash(n)` stands for its first `n` messages, and
/// equals the `hash(n)` of another list exactly when their first `n` messages serialize to the
/// same JSON.
#[derive(Debug, Clone)]
pub struct PrefixHashes {
    /// `chain[n]`: the prefix of `n` messages.
    chain: Vec<[u8; 32]>,
}

impl PrefixHashes {
    /// The hashes of every prefix of `messages` (in the message format `format`).
    pub fn of(messages: &[Value], format: &str) -> PrefixHashes {
        Self::up_to(messages, format, messages.len())
    }

    /// The hashes of the prefixes of up to `limit` messages: enough to check one prefix.
    pub fn up_to(messages: &[Value], format: &str, limit: usize) -> PrefixHashes {
        let mut seed = ring::digest::Context::new(&ring::digest::SHA256);
        seed.update(CHAIN_SEED.as_bytes());
        seed.update(format.as_bytes());
        let mut chain = Vec::with_capacity(limit.min(messages.len()) + 1);
        chain.push(digest_bytes(seed.finish()));
        let mut hashes = PrefixHashes { chain };
        hashes.extend_to(messages, limit);
        hashes
    }

    /// Hashes further, up to `limit` messages of `messages` (the list these hashes began on):
    /// a longer prefix costs only the messages not hashed yet.
    pub fn extend_to(&mut self, messages: &[Value], limit: usize) {
        let chain = &mut self.chain;
        let done = chain.len() - 1;
        for message in messages.iter().take(limit).skip(done) {
            let previous = *chain.last().expect("the seed is there");
            let mut context = ring::digest::Context::new(&ring::digest::SHA256);
            context.update(&previous);
            // One JSON value is self-delimiting after a fixed-size chain value: no framing.
            let mut writer = io::BufWriter::with_capacity(
                8 * 1024,
                DigestWriter {
                    context: &mut context,
                },
            );
            // Writing to a digest cannot fail, and a `Value` always serializes.
            let _ = serde_json::to_writer(&mut writer, message);
            let _ = writer.flush();
            drop(writer);
            chain.push(digest_bytes(context.finish()));
        }
    }

    /// How many messages were hashed.
    pub fn len(&self) -> usize {
        self.chain.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The identity of the first `n` messages, as lowercase hex (`None` past the end).
    pub fn hex(&self, n: usize) -> Option<String> {
        self.chain.get(n).map(|bytes| {
            bytes.iter().fold(String::with_capacity(64), |mut out, b| {
                use std::fmt::Write as _;
                let _ = write!(out, "{b:02x}");
                out
            })
        })
    }
}

fn digest_bytes(digest: ring::digest::Digest) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

struct DigestWriter<'a> {
    context: &'a mut ring::digest::Context,
}

impl Write for DigestWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.context.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One checkpoint: the covered prefix and what stands for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// [`CHECKPOINT_VERSION`].
    pub version: u32,
    /// The message format of the list (`anthropic`, `openai-responses`, …).
    pub format: String,
    /// How many messages of the list (as the pipeline reads it) the checkpoint covers: the
    /// head and the messages the summary replaced.
    pub covered_messages: usize,
    /// How many of them are the head, kept before the summary message.
    pub head_length: usize,
    /// [`PrefixHashes::hex`] of the covered messages.
    pub prefix: String,
    /// The archive holding the replaced messages, as the summary message names it.
    pub archive_path: String,
    /// The summary message, exactly as the result held it (without a thinking line, which
    /// belongs to the messages after it).
    pub message: Value,
    /// The result's `summary` text of that compaction.
    pub summary: Option<String>,
    /// When the checkpoint was made (RFC 3339, UTC).
    pub created_at: String,
    /// The session it was recorded for.
    pub session_id: String,
    /// Who wrote its summary, and how.
    pub summarizer: SummarizerConfig,
}

/// The summarizer configuration that wrote a checkpoint's summary: reused only under the same
/// one, since a summary written with other instructions, by another model or from another
/// request is not the summary this call would write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarizerConfig {
    /// `anthropic`, `openai`, `extractive`, `anthropic-compaction`, `custom`.
    pub provider: String,
    pub model: Option<String>,
    /// The SHA-256 (hex) of what else shapes the summary: the instructions as the library sends
    /// them (prompt style, custom instructions, the library's own prompt) and the request's
    /// configuration (`summaryRequest`, whether the loop's request is given and which).
    pub fingerprint: String,
}

impl Checkpoint {
    /// Whether the list whose prefixes are `hashes` starts with the messages this checkpoint
    /// covers (and has room for its summary after the head).
    pub fn covers_start_of(&self, hashes: &PrefixHashes, format: &str) -> bool {
        self.version == CHECKPOINT_VERSION
            && self.format == format
            && self.head_length < self.covered_messages
            && hashes.hex(self.covered_messages).as_deref() == Some(self.prefix.as_str())
    }

    /// The file name of the checkpoint's archive, when it is one.
    pub fn archive_name(&self) -> Option<&str> {
        let name = self
            .archive_path
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&self.archive_path);
        parse_archive_name(name).map(|_| name)
    }

    fn file_name(&self) -> String {
        file_name_of(&self.prefix)
    }
}

fn file_name_of(prefix: &str) -> String {
    format!("{CHECKPOINT_FILE_PREFIX}{prefix}.json")
}

/// `checkpoint-<hex>.json` → `<hex>` when it is a prefix hash.
pub fn prefix_of_name(name: &str) -> Option<&str> {
    let stem = name
        .strip_prefix(CHECKPOINT_FILE_PREFIX)?
        .strip_suffix(".json")?;
    (stem.len() == 64 && stem.bytes().all(|b| b.is_ascii_hexdigit())).then_some(stem)
}

/// Records `checkpoint` in the session's location (`store` when there is one, else
/// `output_dir`), create-only. `Ok(false)`: a checkpoint of the same prefix was there already,
/// and stays.
pub fn record_in(
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
    checkpoint: &Checkpoint,
) -> io::Result<bool> {
    validate_session_id(session_id)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let bytes = serde_json::to_vec_pretty(checkpoint).map_err(io::Error::other)?;
    let store = ArchiveStore::at(output_dir, store);
    match store.put_new(&store.key(&[session_id, &checkpoint.file_name()]), bytes) {
        Ok(()) => Ok(true),
        Err(StoreError::AlreadyExists) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// What the session's location holds for a list: the checkpoints whose names are prefixes of
/// it, longest first, that passed the checks of this layer, and those set aside, each with why.
#[derive(Debug, Default)]
pub struct Found {
    pub checkpoints: Vec<Checkpoint>,
    /// `checkpoint-….json: why`, for the result's warnings and the audit log.
    pub ignored: Vec<String>,
}

/// The checkpoints in the session's location covering prefixes of the list whose prefixes are
/// `hashes`, longest first, among those whose archive is still there (a pruned archive could not
/// be restored from a reused summary). A file under a checkpoint's name that is a symlink, too
/// large, unreadable, of another version, or not about the prefix it is named for is set aside
/// and reported ([`Found::ignored`]); one whose archive was pruned is left out quietly.
pub fn find_in(
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    session_id: &str,
    hashes: &PrefixHashes,
    format: &str,
) -> io::Result<Found> {
    validate_session_id(session_id)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let store = ArchiveStore::at(output_dir, store);
    let source = Source {
        store: &store,
        session_id,
    };
    let mut found = Found::default();
    let names = source.names()?;
    let checkpoints: HashSet<&str> = names.iter().filter_map(|n| prefix_of_name(n)).collect();
    if checkpoints.is_empty() {
        return Ok(found);
    }
    let archives: HashSet<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| parse_archive_name(n).is_some())
        .collect();
    for n in (1..=hashes.len()).rev() {
        let Some(prefix) = hashes.hex(n) else {
            continue;
        };
        if !checkpoints.contains(prefix.as_str()) {
            continue;
        }
        let name = file_name_of(&prefix);
        let checkpoint = match source.read(&name) {
            Ok(Some(bytes)) => match parse(&bytes) {
                Ok(checkpoint) => checkpoint,
                Err(why) => {
                    found.ignored.push(format!("{name}: {why}"));
                    continue;
                }
            },
            Ok(None) => continue,
            Err(why) => {
                found.ignored.push(format!("{name}: {why}"));
                continue;
            }
        };
        if checkpoint.prefix != prefix
            || checkpoint.covered_messages != n
            || !checkpoint.covers_start_of(hashes, format)
        {
            found.ignored.push(format!(
                "{name}: it does not describe the messages it is named for"
            ));
            continue;
        }
        let Some(archive) = checkpoint.archive_name() else {
            found
                .ignored
                .push(format!("{name}: it names no archive of this session"));
            continue;
        };
        if !archives.contains(archive) {
            tracing::debug!("{name} names {archive}, which is gone; ignored");
            continue;
        }
        found.checkpoints.push(checkpoint);
    }
    Ok(found)
}

/// Where a session's checkpoints and archives are read from.
struct Source<'a> {
    store: &'a ArchiveStore,
    session_id: &'a str,
}

impl Source<'_> {
    /// The names in the session (archives and checkpoints among them).
    fn names(&self) -> io::Result<Vec<String>> {
        Ok(self
            .store
            .list(&self.store.session_key(self.session_id), true)?
            .iter()
            .map(|o| name_of(&o.key).to_string())
            .collect())
    }

    /// The bytes of the checkpoint file `name`: `Ok(None)` when it is gone, `Err` with why it
    /// is not read (a symlink, not a regular file, too large, unreadable).
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
        let key = self.store.key(&[self.session_id, name]);
        match self.store.get_at_most(&key, MAX_CHECKPOINT_BYTES) {
            Ok(Some(bytes)) if bytes.len() as u64 > MAX_CHECKPOINT_BYTES => Err(format!(
                "it is more than a checkpoint can be ({MAX_CHECKPOINT_BYTES} bytes)"
            )),
            Ok(found) => Ok(found),
            Err(StoreError::AlreadyExists) => Ok(None),
            Err(StoreError::Refused(why)) => Err(why),
            Err(e) => Err(format!("it cannot be read: {e}")),
        }
    }
}

/// A checkpoint file read: `Err` says why it is not one of this version.
fn parse(bytes: &[u8]) -> Result<Checkpoint, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("it is not valid JSON ({e})"))?;
    match value.get("version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(CHECKPOINT_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "it is of version {v}, not {CHECKPOINT_VERSION} (an earlier version did not record who wrote it)"
            ))
        }
        None => return Err("it has no version".into()),
    }
    serde_json::from_value(value).map_err(|e| format!("it is not a checkpoint ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("m{i}"), "z": 1, "a": 2}))
            .collect()
    }

    #[test]
    fn prefixes_are_identified_by_content_and_key_order() {
        let a = list(6);
        let b: Vec<Value> = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        let (ha, hb) = (
            PrefixHashes::of(&a, "anthropic"),
            PrefixHashes::of(&b, "anthropic"),
        );
        for n in 0..=6 {
            assert_eq!(ha.hex(n), hb.hex(n));
        }
        // Hashed in two steps, the same chain.
        let mut hc = PrefixHashes::up_to(&a, "anthropic", 2);
        assert_eq!(hc.len(), 2);
        hc.extend_to(&a, 5);
        assert_eq!(hc.len(), 5);
        for n in 0..=5 {
            assert_eq!(hc.hex(n), ha.hex(n));
        }
        assert_eq!(ha.hex(7), None);
        // Another format, another chain.
        assert_ne!(
            PrefixHashes::of(&a, "gemini").hex(3),
            ha.hex(3),
            "the format is part of the identity"
        );
        // A changed message changes its prefix and every longer one, never a shorter one.
        let mut c = a.clone();
        c[3]["content"] = json!("m3!");
        let hc = PrefixHashes::of(&c, "anthropic");
        assert_eq!(hc.hex(3), ha.hex(3));
        for n in 4..=6 {
            assert_ne!(hc.hex(n), ha.hex(n));
        }
        // Keys reordered: another JSON text, another prefix.
        let mut d = a.clone();
        d[0] = json!({"role": "user", "content": "m0", "a": 2, "z": 1});
        assert_ne!(PrefixHashes::of(&d, "anthropic").hex(1), ha.hex(1));
        // Moving content between neighbours is not the same list either.
        let e = vec![json!("ab"), json!("c")];
        let f = vec![json!("a"), json!("bc")];
        assert_ne!(
            PrefixHashes::of(&e, "x").hex(2),
            PrefixHashes::of(&f, "x").hex(2)
        );
    }

    fn checkpoint_of(messages: &[Value], covered: usize, archive: &str) -> Checkpoint {
        Checkpoint {
            version: CHECKPOINT_VERSION,
            format: "anthropic".into(),
            covered_messages: covered,
            head_length: 0,
            prefix: PrefixHashes::of(messages, "anthropic")
                .hex(covered)
                .unwrap(),
            archive_path: archive.into(),
            message: json!({"role": "user", "content": "[context-compact] summary"}),
            summary: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            session_id: "s".into(),
            summarizer: SummarizerConfig {
                provider: "custom".into(),
                model: None,
                fingerprint: "f".into(),
            },
        }
    }

    /// The longest checkpoint `find_in` offers.
    fn longest(found: Found) -> Option<Checkpoint> {
        assert!(found.ignored.is_empty(), "{:?}", found.ignored);
        found.checkpoints.into_iter().next()
    }

    #[test]
    fn the_longest_covered_prefix_with_its_archive_is_found_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let messages = list(10);
        let hashes = PrefixHashes::of(&messages, "anthropic");
        assert_eq!(
            longest(find_in(dir.path(), None, "s", &hashes, "anthropic").unwrap()),
            None
        );
        let archive = |n: u64| {
            let name = format!("compact-20260101T000000Z-{n}.json");
            std::fs::create_dir_all(dir.path().join("s")).unwrap();
            std::fs::write(dir.path().join("s").join(&name), "[]").unwrap();
            dir.path().join("s").join(name).display().to_string()
        };
        let short = checkpoint_of(&messages, 4, &archive(1));
        let long = checkpoint_of(&messages, 7, &archive(2));
        assert!(record_in(dir.path(), None, "s", &short).unwrap());
        assert!(record_in(dir.path(), None, "s", &long).unwrap());
        // The same prefix again: the first stays.
        let mut again = long.clone();
        again.message = json!({"role": "user", "content": "[context-compact] other"});
        assert!(!record_in(dir.path(), None, "s", &again).unwrap());
        let found = longest(find_in(dir.path(), None, "s", &hashes, "anthropic").unwrap());
        assert_eq!(found.as_ref(), Some(&long));
        // A list that differs at message 5: only the shorter prefix is its.
        let mut other = messages.clone();
        other[5]["content"] = json!("changed");
        let found = longest(
            find_in(
                dir.path(),
                None,
                "s",
                &PrefixHashes::of(&other, "anthropic"),
                "anthropic",
            )
            .unwrap(),
        );
        assert_eq!(found.as_ref(), Some(&short));
        // The archive of the long one pruned: the short one.
        std::fs::remove_file(dir.path().join("s/compact-20260101T000000Z-2.json")).unwrap();
        let found = longest(find_in(dir.path(), None, "s", &hashes, "anthropic").unwrap());
        assert_eq!(found.as_ref(), Some(&short));
        // Another format never matches.
        assert!(find_in(dir.path(), None, "s", &hashes, "gemini")
            .unwrap()
            .checkpoints
            .is_empty());
    }

    #[test]
    fn concurrent_writers_of_one_prefix_leave_one_whole_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let messages = list(5);
        std::fs::create_dir_all(dir.path().join("s")).unwrap();
        let archive = dir.path().join("s/compact-20260101T000000Z-1.json");
        std::fs::write(&archive, "[]").unwrap();
        let path = dir.path().to_path_buf();
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let mut checkpoint = checkpoint_of(&messages, 3, &archive.display().to_string());
                checkpoint.summary = Some(format!("writer {i}"));
                let path = path.clone();
                std::thread::spawn(move || record_in(&path, None, "s", &checkpoint).unwrap())
            })
            .collect();
        let won: usize = handles
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum();
        assert_eq!(won, 1);
        let found = longest(
            find_in(
                dir.path(),
                None,
                "s",
                &PrefixHashes::of(&messages, "anthropic"),
                "anthropic",
            )
            .unwrap(),
        )
        .unwrap();
        assert!(found.summary.unwrap().starts_with("writer "));
        let entries: Vec<_> = std::fs::read_dir(dir.path().join("s"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("compact-"))
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert!(prefix_of_name(&entries[0]).is_some());
    }

    #[test]
    fn planted_files_under_a_checkpoint_name_are_set_aside_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s");
        std::fs::create_dir_all(&session).unwrap();
        let messages = list(8);
        let hashes = PrefixHashes::of(&messages, "anthropic");
        let archive = session.join("compact-20260101T000000Z-1.json");
        std::fs::write(&archive, "[]").unwrap();
        let name = |n: usize| file_name_of(&hashes.hex(n).unwrap());
        // Not JSON, another version, the wrong prefix inside, too large.
        std::fs::write(session.join(name(7)), "not json").unwrap();
        let mut old =
            serde_json::to_value(checkpoint_of(&messages, 6, &archive.display().to_string()))
                .unwrap();
        old["version"] = serde_json::json!(1);
        std::fs::write(session.join(name(6)), old.to_string()).unwrap();
        let mut wrong = checkpoint_of(&messages, 4, &archive.display().to_string());
        wrong.prefix = hashes.hex(5).unwrap();
        std::fs::write(session.join(name(5)), serde_json::to_vec(&wrong).unwrap()).unwrap();
        std::fs::write(
            session.join(name(4)),
            vec![b' '; MAX_CHECKPOINT_BYTES as usize + 1],
        )
        .unwrap();
        #[cfg(unix)]
        {
            let real = checkpoint_of(&messages, 3, &archive.display().to_string());
            let elsewhere = dir.path().join("elsewhere.json");
            std::fs::write(&elsewhere, serde_json::to_vec(&real).unwrap()).unwrap();
            std::os::unix::fs::symlink(&elsewhere, session.join(name(3))).unwrap();
        }
        let valid = checkpoint_of(&messages, 2, &archive.display().to_string());
        assert!(record_in(dir.path(), None, "s", &valid).unwrap());
        let found = find_in(dir.path(), None, "s", &hashes, "anthropic").unwrap();
        assert_eq!(found.checkpoints, vec![valid]);
        let said = found.ignored.join("\n");
        for why in [
            "not valid JSON",
            "of version 1",
            "does not describe the messages",
            "more than a checkpoint can be",
        ] {
            assert!(said.contains(why), "{why}: {said}");
        }
        #[cfg(unix)]
        assert!(said.contains("symbolic link"), "{said}");
    }
}
