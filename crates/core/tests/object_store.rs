//! Archives on object stores (issue 14), through the real pipeline, against `file://` URLs
//! (temporary directories) and a real S3-compatible server: moto's standalone server, started
//! by each test on 127.0.0.1. Tests that need the server skip, saying so, when it cannot be
//! started; `.ci/run` installs it (`.venv-moto/`) so CI runs them. Set
//! `CONTEXT_COMPACT_MOTO_SERVER` to the `moto_server` executable to use another one.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use context_compact_core::archive::session;
use context_compact_core::archive::store::ArchiveStore;
use context_compact_core::archive::{PruneOptions, Restored};
use context_compact_core::base::error::ErrorCode;
use context_compact_core::base::retry::RetryPolicy;
use context_compact_core::pipeline::{CompactOptions, CompactOutcome};
mod common;
use common::{assembled, run, thinking_turns, Capture};
use serde_json::{json, Value};

const SECRET: &str = "SECRETzz9f3b1c-do-not-leak";

fn turns(from: usize, count: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for i in from..from + count {
        out.push(json!({"role": "user", "content": format!("question {i}: we decided to keep src/file{i}.rs 🦀 {}", "word ".repeat(30))}));
        out.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("reading file {i}")},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {"path": format!("src/file{i}.rs"), "n": 12345678901234567890u64}}
        ]}));
        out.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("fn f{i}() {{}} {}", "x ".repeat(40))}
        ]}));
        out.push(json!({"role": "assistant", "content": format!("answer {i} 😀 {}", "word ".repeat(30))}));
    }
    out
}

fn conversation() -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": "You are a careful agent."})];
    messages.extend(turns(0, 8));
    messages
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(20),
    }
}

fn options_for(store: Arc<ArchiveStore>) -> CompactOptions {
    CompactOptions {
        context_token_limit: 2_000,
        tail_retention_ratio: 0.1,
        force: true,
        output_dir: PathBuf::from(store.location()),
        session_id: "s".into(),
        extract_memory: true,
        max_retries: 1,
        retry_base_delay: Duration::from_millis(20),
        archive_store: Some(store),
        ..CompactOptions::default()
    }
}

fn rebuilt(messages: &[Value], restored: Vec<Restored>) -> Vec<Value> {
    restored
        .into_iter()
        .map(|r| match r {
            Restored::Original(i) => messages[i].clone(),
            Restored::Archived(message) => message,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The S3-compatible server

fn moto_executable() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CONTEXT_COMPACT_MOTO_SERVER") {
        return Some(PathBuf::from(path));
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let local = repo.join(".venv-moto/bin/moto_server");
    local.exists().then_some(local)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Says why the server is missing: a skip, or a failure when CI requires the server
/// (`CONTEXT_COMPACT_REQUIRE_MOTO=1`, set by `.ci/run`, which installs it).
fn skip(why: &str) {
    if std::env::var_os("CONTEXT_COMPACT_REQUIRE_MOTO").is_some_and(|v| v == "1") {
        panic!("moto_server is required (CONTEXT_COMPACT_REQUIRE_MOTO=1): {why}");
    }
    eprintln!("SKIPPED: {why}");
}

/// A moto server on 127.0.0.1, stopped when dropped.
struct Moto {
    child: Option<Child>,
    port: u16,
}

impl Moto {
    /// Starts a server (with request authentication when `authenticate`), or `None` with a
    /// message when it cannot be started.
    fn start(authenticate: bool) -> Option<Moto> {
        let Some(executable) = moto_executable() else {
            skip(
                "no moto_server (run `python3 -m venv .venv-moto && .venv-moto/bin/pip install 'moto[server]==5.2.5'`, or set CONTEXT_COMPACT_MOTO_SERVER)",
            );
            return None;
        };
        let port = free_port();
        let mut command = Command::new(&executable);
        command
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if authenticate {
            command.env("INITIAL_NO_AUTH_ACTION_COUNT", "0");
        }
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                skip(&format!("cannot start {}: {e}", executable.display()));
                return None;
            }
        };
        let moto = Moto {
            child: Some(child),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if http(port, "GET", "/", b"").is_some() {
                return Some(moto);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        skip(&format!(
            "moto_server did not answer on 127.0.0.1:{port} within 30 s"
        ));
        None
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto accepts unsigned requests unless authenticating).
    fn bucket(&self, name: &str) {
        let status = http(self.port, "PUT", &format!("/{name}"), b"").expect("moto answers");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One plain HTTP request; the status line, or `None` when nothing answered.
fn http(port: u16, method: &str, path: &str, body: &[u8]) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.lines().next().map(str::to_string)
}

fn s3_options(endpoint: &str, secret: &str) -> BTreeMap<String, String> {
    [
        ("aws_endpoint", endpoint),
        ("aws_access_key_id", "testing-key-id"),
        ("aws_secret_access_key", secret),
        ("aws_region", "us-east-1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn s3_store(url: &str, endpoint: &str) -> Arc<ArchiveStore> {
    Arc::new(
        ArchiveStore::open(
            url,
            &s3_options(endpoint, SECRET),
            fast_retry(),
            "outputDir",
        )
        .unwrap()
        .with_timeout(Duration::from_secs(10)),
    )
}

fn file_store(dir: &std::path::Path) -> Arc<ArchiveStore> {
    let url = format!("file://{}", dir.display());
    Arc::new(ArchiveStore::open(&url, &BTreeMap::new(), fast_retry(), "outputDir").unwrap())
}

// ---------------------------------------------------------------------------------------------
// The lifecycle

/// Three compactions, list, restore, the records, memory, and prune by age, on `store`.
fn lifecycle(store: Arc<ArchiveStore>) {
    let options = options_for(store.clone());
    let mut history = conversation();
    let mut current = history.clone();
    let mut paths = Vec::new();
    for round in 0..3 {
        let outcome = run(&current, &options);
        assert!(outcome.compacted, "round {round}: {outcome:?}");
        assert!(
            common::other_warnings(&outcome).is_empty(),
            "{:?}",
            outcome.warnings
        );
        let path = outcome.archive_path.clone().expect("archived");
        let path = path.display().to_string();
        assert!(
            path.starts_with(&format!("{}/s/compact-", store.location())),
            "{path}"
        );
        assert!(path.ends_with(&format!("-{}.json", round + 1)), "{path}");
        paths.push(path);
        let extracted = outcome.extracted.as_ref().expect("memory extracted");
        assert!(extracted
            .dir
            .display()
            .to_string()
            .ends_with("/s/extracted"));
        current = assembled(&current, &outcome);
        let more = turns(100 + round * 10, 3);
        history.extend(more.iter().cloned());
        current.extend(more);
    }

    let listed = session::list_archives(&store, "s").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(
        listed.iter().map(|a| a.path.clone()).collect::<Vec<_>>(),
        paths
    );
    for archive in &listed {
        assert!(archive.meta_path.is_some(), "{archive:?}");
        assert!(archive.summary.as_deref().is_some_and(|s| !s.is_empty()));
        assert!(archive.message_count.is_some_and(|n| n > 0));
        assert!(archive.size_bytes > 0);
    }

    let restored = session::restore_messages(&store, &current, "s").unwrap();
    assert_eq!(rebuilt(&current, restored), history);

    let events = session::read_events(&store, "s").unwrap();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds, vec!["compacted"; 3]);
    assert_eq!(
        events
            .iter()
            .map(|e| e["sequence"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let summaries = store
        .list(&store.key(&["s", session::SUMMARIES_DIR]), true)
        .unwrap();
    assert_eq!(summaries.len(), 3);
    let decisions = store
        .list(&store.key(&["s", "extracted", "decisions"]), true)
        .unwrap();
    assert!(!decisions.is_empty());
    let mut lines = Vec::new();
    for object in &decisions {
        let text = String::from_utf8(store.get(&object.key).unwrap().unwrap()).unwrap();
        lines.extend(
            text.lines()
                .filter(|l| l.starts_with("- "))
                .map(str::to_string),
        );
    }
    let unique: BTreeSet<&String> = lines.iter().collect();
    assert_eq!(unique.len(), lines.len(), "no memory line twice: {lines:?}");

    // Prune by age: an archive (and its metadata) from 2020 goes, this week's stay.
    let old = "compact-20200101T000000Z-1000.json";
    store
        .put_new(&store.key(&["s", old]), b"[]".to_vec())
        .unwrap();
    store
        .put_new(
            &store.key(&["s", "compact-20200101T000000Z-1000.meta.json"]),
            b"{}".to_vec(),
        )
        .unwrap();
    let report = session::prune_archives(
        &store,
        &PruneOptions {
            older_than_days: 30.0,
            session_id: None,
        },
    )
    .unwrap();
    assert_eq!(report.kept, 3);
    assert_eq!(
        report.removed,
        vec![
            store.display_path("s", old),
            store.display_path("s", "compact-20200101T000000Z-1000.meta.json"),
        ]
    );
    assert_eq!(session::list_archives(&store, "s").unwrap().len(), 3);
    let events = session::read_events(&store, "s").unwrap();
    assert_eq!(events.last().unwrap()["event"], "pruned");
    // Numbering continues past the pruned archive.
    let next = context_compact_core::archive::session::persist_in(
        &[json!({"role": "user", "content": "after the prune"})],
        std::path::Path::new(""),
        Some(&store),
        "s",
    )
    .unwrap();
    assert_eq!(next.sequence, 1001);

    // The store's credentials are in no object: archives, metadata, events, summaries, memory.
    let everything = store.list(&store.key(&[]), false).unwrap();
    assert!(everything.len() > 10);
    for object in everything {
        let bytes = store.get(&object.key).unwrap().unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{}",
            object.key
        );
    }
}

#[test]
fn the_whole_lifecycle_on_a_file_url() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archives root");
    let store = file_store(&root);
    lifecycle(store);
    // Everything is under the directory, in the documented layout.
    assert!(root.join("s/events").is_dir());
    assert!(root.join("s/last-sequence").is_file());
}

#[test]
fn the_whole_lifecycle_on_s3() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("archives");
    lifecycle(s3_store("s3://archives/fleet/agents", &moto.endpoint()));
}

#[test]
fn a_prefix_with_odd_characters_is_used_as_written() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("odd");
    let url = "s3://odd/team a/ünï+50%/x";
    let store = s3_store(url, &moto.endpoint());
    let options = options_for(store.clone());
    let mut current = conversation();
    let history = current.clone();
    let outcome = run(&current, &options);
    assert!(
        outcome.compacted && common::other_warnings(&outcome).is_empty(),
        "{outcome:?}"
    );
    current = assembled(&current, &outcome);
    let listed = session::list_archives(&store, "s").unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0]
        .path
        .starts_with("s3://odd/team a/ünï+50%/x/s/compact-"));
    // The key holds the characters themselves (a second store at the bucket's root sees them).
    let root = s3_store("s3://odd", &moto.endpoint());
    let keys: Vec<String> = root
        .list("team a", false)
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    assert!(
        keys.iter()
            .any(|k| k.starts_with("team a/ünï+50%/x/s/compact-") && k.ends_with("-1.json")),
        "{keys:?}"
    );
    let restored = session::restore_messages(&store, &current, "s").unwrap();
    assert_eq!(rebuilt(&current, restored), history);
}

// ---------------------------------------------------------------------------------------------
// One sequence number per compaction (issue 20)

/// 64 compactions of one session at once, each removing kept thinking and shortening a kept
/// tool result: numbers 1–64, one archive (one claim, one listing entry) per compaction, each
/// holding its kept originals, and every result restores exactly.
fn sixty_four_compactions_with_thinking(store: Arc<ArchiveStore>) {
    let mut input = vec![json!({"role": "system", "content": "You are a coding agent."})];
    input.extend(thinking_turns("c", 8, 600));
    let input = Arc::new(input);
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let input = input.clone();
            let store = store.clone();
            std::thread::spawn(move || {
                let options = CompactOptions {
                    context_token_limit: 3_000,
                    tail_retention_ratio: 0.3,
                    thinking: context_compact_core::plan::thinking::ThinkingPolicy::Strip,
                    extract_memory: false,
                    max_retries: 5,
                    ..options_for(store)
                };
                run(&input, &options)
            })
        })
        .collect();
    let outcomes: Vec<CompactOutcome> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut sequences = Vec::new();
    for outcome in &outcomes {
        assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
        assert!(!outcome.transformations.is_empty() && !outcome.offloaded.is_empty());
        let path = outcome.archive_path.as_ref().expect("archived");
        assert_eq!(outcome.thinking_archive_path.as_ref(), Some(path));
        assert_eq!(outcome.offload_archive_path.as_ref(), Some(path));
        let name = path.display().to_string();
        let name = name.rsplit('/').next().unwrap();
        sequences.push(
            context_compact_core::archive::parse_archive_name(name)
                .unwrap()
                .1,
        );
    }
    sequences.sort_unstable();
    assert_eq!(sequences, (1..=64).collect::<Vec<_>>());
    let listed = session::list_archives(&store, "s").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        (1..=64).collect::<Vec<_>>()
    );
    let claims = store
        .list(&store.key(&["s", session::SEQUENCES_DIR]), true)
        .unwrap();
    assert_eq!(claims.len(), 64);
    for archive in &listed {
        let bytes = store
            .get(&store.key(&["s", &archive.file_name]))
            .unwrap()
            .unwrap();
        let written: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(written["keptOriginals"]["thinkingRemoved"].is_array());
        assert!(written["keptOriginals"]["shortened"].is_array());
        assert_eq!(
            archive.message_count,
            written["messages"].as_array().map(Vec::len)
        );
    }
    for outcome in outcomes.iter().step_by(9) {
        let result = assembled(&input, outcome);
        let restored = session::restore_messages(&store, &result, "s").unwrap();
        assert_eq!(rebuilt(&result, restored), *input);
    }
    // Pruning removes one archive (and its metadata) per compaction.
    let report = session::prune_archives(
        &store,
        &PruneOptions {
            older_than_days: 0.0,
            session_id: Some("s".into()),
        },
    )
    .unwrap();
    let archives = report
        .removed
        .iter()
        .filter(|p| {
            context_compact_core::archive::parse_archive_name(p.rsplit('/').next().unwrap())
                .is_some()
        })
        .count();
    assert_eq!((archives, report.removed.len()), (64, 128));
}

#[test]
fn sixty_four_compactions_with_thinking_take_numbers_1_to_64_on_a_file_url() {
    let tmp = tempfile::tempdir().unwrap();
    sixty_four_compactions_with_thinking(file_store(tmp.path()));
}

#[test]
fn sixty_four_compactions_with_thinking_take_numbers_1_to_64_on_s3() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("one");
    sixty_four_compactions_with_thinking(s3_store("s3://one/fleet", &moto.endpoint()));
}

/// The archives of `crates/core/tests/fixtures/separate-archives` (written by the code before
/// one compaction took one number: separate archives for the shortened and the thinking
/// originals), uploaded to the store as that code wrote them, restore exactly; a compaction
/// after them takes one number.
#[test]
fn archives_in_the_separate_archives_layout_restore_from_s3() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("old");
    let store = s3_store("s3://old/p", &moto.endpoint());
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/separate-archives");
    let read = |name: &str| -> Vec<Value> {
        serde_json::from_str(&std::fs::read_to_string(fixture.join(name)).unwrap()).unwrap()
    };
    for (session, count) in [("thinking-offload", 6u64), ("openai-offload", 2)] {
        for entry in std::fs::read_dir(fixture.join("archives").join(session)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_str().unwrap().to_string();
            if context_compact_core::archive::parse_archive_name(&name).is_some()
                || context_compact_core::archive::parse_meta_name(&name).is_some()
            {
                let sequence = name.rsplit('-').next().unwrap().split('.').next().unwrap();
                store
                    .put_new(
                        &store.key(&[session, session::SEQUENCES_DIR, sequence]),
                        name.clone().into_bytes(),
                    )
                    .or_else(|e| match e {
                        context_compact_core::archive::store::StoreError::AlreadyExists => Ok(()),
                        e => Err(e),
                    })
                    .unwrap();
                store
                    .put_new(
                        &store.key(&[session, &name]),
                        std::fs::read(entry.path()).unwrap(),
                    )
                    .unwrap();
            }
        }
        let compacted = read(&format!("{session}.compacted.json"));
        let restored = session::restore_messages(&store, &compacted, session).unwrap();
        assert_eq!(
            serde_json::to_string(&rebuilt(&compacted, restored)).unwrap(),
            serde_json::to_string(&read(&format!("{session}.input.json"))).unwrap(),
            "{session}"
        );
        let listed = session::list_archives(&store, session).unwrap();
        assert_eq!(
            listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
            (1..=count).collect::<Vec<_>>()
        );
    }
    // The chain goes on: one new compaction, one new number, and the whole history restores.
    let mut history = read("thinking-offload.input.json");
    let mut current = read("thinking-offload.compacted.json");
    let more = thinking_turns("new", 4, 700);
    history.extend(more.iter().cloned());
    current.extend(more);
    let options = CompactOptions {
        context_token_limit: 3_000,
        tail_retention_ratio: 0.3,
        thinking: context_compact_core::plan::thinking::ThinkingPolicy::Strip,
        session_id: "thinking-offload".into(),
        extract_memory: false,
        ..options_for(store.clone())
    };
    let outcome = run(&current, &options);
    assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
    assert!(!outcome.transformations.is_empty() && !outcome.offloaded.is_empty());
    let listed = session::list_archives(&store, "thinking-offload").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    let result = assembled(&current, &outcome);
    let restored = session::restore_messages(&store, &result, "thinking-offload").unwrap();
    assert_eq!(
        serde_json::to_string(&rebuilt(&result, restored)).unwrap(),
        serde_json::to_string(&history).unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// Concurrency: separate processes (this test binary run again as a writer)

const WRITER_ENV: &str = "CONTEXT_COMPACT_TEST_WRITER";
const WRITES_PER_PROCESS: usize = 6;
const PROCESSES: usize = 4;

/// Not a test on its own: the body of a writer process (see `writers_race`). Writes
/// `WRITES_PER_PROCESS` archives, each saying who wrote it, and prints their sequences.
#[test]
fn writer_process() {
    let Ok(spec) = std::env::var(WRITER_ENV) else {
        return;
    };
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let url = spec["url"].as_str().unwrap();
    let options: BTreeMap<String, String> =
        serde_json::from_value(spec["options"].clone()).unwrap();
    let store = ArchiveStore::open(url, &options, fast_retry(), "outputDir").unwrap();
    let writer = spec["writer"].as_u64().unwrap();
    // Start together, so the writers really contend.
    let start = spec["start_at_ms"].as_u64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    std::thread::sleep(Duration::from_millis(start.saturating_sub(now)));
    for i in 0..WRITES_PER_PROCESS {
        let message = json!({"role": "user", "content": format!("writer {writer} write {i}")});
        let file = session::persist_messages(&store, &[message], "shared").unwrap();
        println!("WROTE {writer} {i} {}", file.sequence);
    }
}

/// Runs `PROCESSES` writer processes at once on one session of `url`: every archive written is
/// there, once, with its own content, and the sequence numbers are 1..=N without a gap.
fn writers_race(url: &str, options: BTreeMap<String, String>, store: &ArchiveStore) {
    let start_at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 1_500;
    let children: Vec<Child> = (0..PROCESSES)
        .map(|writer| {
            let spec = json!({"url": url, "options": options, "writer": writer, "start_at_ms": start_at_ms});
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "writer_process", "--nocapture", "--test-threads=1"])
                .env(WRITER_ENV, spec.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut claimed = BTreeMap::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a writer failed");
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            // The test harness may print "test writer_process ... " before the first line.
            if let Some(rest) = line.split_once("WROTE ").map(|(_, rest)| rest) {
                let parts: Vec<u64> = rest.split(' ').map(|p| p.parse().unwrap()).collect();
                let previous = claimed.insert(parts[2], (parts[0], parts[1]));
                assert!(previous.is_none(), "sequence {} claimed twice", parts[2]);
            }
        }
    }
    let total = (PROCESSES * WRITES_PER_PROCESS) as u64;
    assert_eq!(claimed.len() as u64, total);
    let listed = session::list_archives(store, "shared").unwrap();
    assert_eq!(
        listed.iter().map(|a| a.sequence).collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );
    // No archive was overwritten: each holds what the writer that claimed it wrote.
    for archive in &listed {
        let (writer, i) = claimed[&archive.sequence];
        let bytes = store
            .get(&store.key(&["shared", &archive.file_name]))
            .unwrap()
            .unwrap();
        let messages: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(messages[0]["content"], format!("writer {writer} write {i}"));
    }
}

#[test]
fn concurrent_processes_on_one_session_of_a_file_url_never_collide() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("file://{}", tmp.path().display());
    let store = file_store(tmp.path());
    writers_race(&url, BTreeMap::new(), &store);
}

#[test]
fn concurrent_processes_on_one_session_of_s3_never_collide() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("race");
    let url = "s3://race/p";
    let store = s3_store(url, &moto.endpoint());
    writers_race(url, s3_options(&moto.endpoint(), SECRET), &store);
}

// ---------------------------------------------------------------------------------------------
// Failures

/// Compacts with every tracing event captured; returns the outcome and the captured lines.
fn compact_capturing(options: &CompactOptions) -> (CompactOutcome, Vec<String>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let outcome =
        tracing::subscriber::with_default(Capture(lines.clone()), || run(&conversation(), options));
    let lines = lines.lock().unwrap().clone();
    (outcome, lines)
}

fn assert_degraded(outcome: &CompactOutcome) {
    assert!(outcome.compacted, "{outcome:?}");
    assert!(outcome.archive_path.is_none());
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("could not archive")),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn a_stopped_server_degrades_to_no_archive_or_fails_closed_on_request() {
    let Some(mut moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("gone");
    let store = s3_store("s3://gone/p", &moto.endpoint());
    let options = options_for(store.clone());
    assert!(run(&conversation(), &options).archive_path.is_some());
    moto.stop();
    let (outcome, lines) = compact_capturing(&options);
    assert_degraded(&outcome);
    let strict = CompactOptions {
        require_archive: true,
        ..options.clone()
    };
    let (outcome, more) = compact_capturing(&strict);
    assert!(!outcome.compacted);
    assert_eq!(
        outcome.error.as_ref().unwrap().code,
        ErrorCode::ArchiveFailed
    );
    let everything = format!("{outcome:?} {lines:?} {more:?}");
    assert!(!everything.contains(SECRET));
}

#[test]
fn a_store_that_never_answers_times_out_and_degrades() {
    // A listener that accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let mut store_options = s3_options(&format!("http://127.0.0.1:{port}"), SECRET);
    store_options.insert("timeout".into(), "300ms".into());
    let store = ArchiveStore::open(
        "s3://silent/p",
        &store_options,
        RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(10),
        },
        "outputDir",
    )
    .unwrap();
    let options = CompactOptions {
        max_retries: 0,
        ..options_for(Arc::new(store))
    };
    let started = Instant::now();
    let (outcome, _) = compact_capturing(&options);
    assert_degraded(&outcome);
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Forwards connections to `upstream`, but cuts each one after `limit` bytes from the client:
/// small requests (list, get) pass, an upload is interrupted in its body.
fn cutting_proxy(upstream: u16, limit: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (mut client_read, mut server_write) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut server_read, mut client_write) = (server, client);
            std::thread::spawn(move || {
                let mut sent = 0;
                let mut buf = [0u8; 4096];
                while let Ok(n) = client_read.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let take = n.min(limit - sent);
                    if server_write.write_all(&buf[..take]).is_err() {
                        break;
                    }
                    sent += take;
                    if sent >= limit {
                        let _ = server_write.shutdown(Shutdown::Both);
                        let _ = client_read.shutdown(Shutdown::Both);
                        break;
                    }
                }
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server_read, &mut client_write);
                let _ = client_write.shutdown(Shutdown::Both);
            });
        }
    });
    port
}

#[test]
fn an_upload_cut_mid_body_leaves_no_archive() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("cut");
    let proxy = cutting_proxy(moto.port, 2_000);
    let through_proxy = s3_store("s3://cut/p", &format!("http://127.0.0.1:{proxy}"));
    let options = CompactOptions {
        max_retries: 0,
        ..options_for(through_proxy)
    };
    let (outcome, _) = compact_capturing(&options);
    assert_degraded(&outcome);
    // Straight to the server: no archive, no metadata, nothing half-written.
    let direct = s3_store("s3://cut/p", &moto.endpoint());
    assert!(session::list_archives(&direct, "s").unwrap().is_empty());
    let objects = direct.list(&direct.session_key("s"), true).unwrap();
    assert!(
        objects.iter().all(|o| !o.key.contains("compact-")),
        "{objects:?}"
    );
}

#[test]
fn wrong_credentials_fail_clearly_without_the_secret() {
    let Some(moto) = Moto::start(true) else {
        return;
    };
    let store = s3_store("s3://locked/p", &moto.endpoint());
    let options = options_for(store.clone());
    let (outcome, lines) = compact_capturing(&options);
    assert_degraded(&outcome);
    let warning = outcome.warnings.join("\n");
    assert!(
        warning.contains("403") || warning.to_lowercase().contains("forbidden"),
        "{warning}"
    );
    let listed = session::list_archives(&store, "s").unwrap_err().to_string();
    assert!(
        listed.contains("403") || listed.to_lowercase().contains("forbidden"),
        "{listed}"
    );
    let everything = format!("{outcome:?} {lines:?} {listed} {store:?}");
    assert!(!everything.contains(SECRET), "{everything}");
}

#[test]
fn a_secret_in_a_server_answer_is_redacted() {
    // A server echoing the request's secret back (no real one does; the redaction must hold
    // whatever the answer): an S3-style error body holding the secret.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let body = format!(
                "<Error><Code>AccessDenied</Code><Message>bad secret {SECRET}</Message></Error>"
            );
            let _ = write!(
                stream,
                "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let store = s3_store("s3://echo/p", &format!("http://127.0.0.1:{port}"));
    let (outcome, lines) = compact_capturing(&options_for(store));
    assert_degraded(&outcome);
    let everything = format!("{outcome:?} {lines:?}");
    assert!(everything.contains("[redacted]"), "{everything}");
    assert!(!everything.contains(SECRET), "{everything}");
}

/// Two writers that both list the session before either writes, and write in different
/// seconds (so their archive names differ): they must still get different numbers. The store
/// is object_store's in-memory one; each writer's view of it pauses as described.
#[test]
fn writers_in_different_seconds_never_share_a_number() {
    use context_compact_core::archive::store::{
        ObjectStoreBackend, StoreBackend, StoreFuture, StoredObject,
    };
    use std::sync::Barrier;

    /// Each writer's view: its first listing waits until both writers listed (neither has
    /// written yet), and its first read after that (of `last-sequence`, just before it names its
    /// archive) waits `name_delay`, so the second writer's archive name carries a later second.
    struct Paused {
        inner: ObjectStoreBackend,
        listed: Arc<Barrier>,
        first_list: Mutex<bool>,
        first_get: Mutex<bool>,
        name_delay: Duration,
    }
    impl StoreBackend for Paused {
        fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()> {
            self.inner.put(key, bytes, create_only)
        }
        fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>> {
            let first = std::mem::replace(&mut *self.first_get.lock().unwrap(), false);
            let delay = if first {
                self.name_delay
            } else {
                Duration::ZERO
            };
            let get = self.inner.get(key);
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                get.await
            })
        }
        fn list(&self, dir: String, shallow: bool) -> StoreFuture<Vec<StoredObject>> {
            let first = std::mem::replace(&mut *self.first_list.lock().unwrap(), false);
            let listed = self.listed.clone();
            let list = self.inner.list(dir, shallow);
            Box::pin(async move {
                let objects = list.await;
                if first {
                    tokio::task::spawn_blocking(move || listed.wait())
                        .await
                        .unwrap();
                }
                objects
            })
        }
        fn delete(&self, key: String) -> StoreFuture<()> {
            self.inner.delete(key)
        }
    }

    let memory: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::memory::InMemory::new());
    let listed = Arc::new(Barrier::new(2));
    let writers: Vec<_> = [Duration::ZERO, Duration::from_millis(1_100)]
        .into_iter()
        .map(|name_delay| {
            let backend = Paused {
                inner: ObjectStoreBackend::new(memory.clone()),
                listed: listed.clone(),
                first_list: Mutex::new(true),
                first_get: Mutex::new(true),
                name_delay,
            };
            let store = ArchiveStore::from_backend(Arc::new(backend), "mem:", fast_retry());
            std::thread::spawn(move || {
                session::persist_messages(&store, &[json!({"role": "user", "content": "x"})], "s")
                    .unwrap()
            })
        })
        .collect();
    let written: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_ne!(
        written[0].timestamp, written[1].timestamp,
        "the writers wrote in different seconds"
    );
    let mut sequences: Vec<u64> = written.iter().map(|w| w.sequence).collect();
    sequences.sort();
    assert_eq!(sequences, vec![1, 2]);
}

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    free_port()
}

#[test]
fn azure_and_gcs_urls_degrade_when_unreachable_without_leaking_secrets() {
    // Both pointed at a closed local port, so nothing leaves this machine.
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let azure: BTreeMap<String, String> = [
        ("azure_storage_account_name", "devstoreaccount1"),
        // An account key is base64; this one holds the recognizable secret.
        (
            "azure_storage_account_key",
            "U0VDUkVUeno5ZjNiMWMtZG8tbm90LWxlYWs=",
        ),
        ("azure_storage_endpoint", endpoint.as_str()),
        ("allow_http", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let service_account = json!({
        "private_key": format!("-----BEGIN PRIVATE KEY-----{SECRET}-----END PRIVATE KEY-----"),
        "private_key_id": "kid",
        "client_email": "agent@example.iam.gserviceaccount.com",
        "gcs_base_url": endpoint,
        "disable_oauth": true,
    })
    .to_string();
    let gcs: BTreeMap<String, String> = [
        ("google_service_account_key".to_string(), service_account),
        ("allow_http".to_string(), "true".to_string()),
    ]
    .into_iter()
    .collect();
    for (url, options) in [("az://archives/p", azure), ("gs://archives/p", gcs)] {
        let store = ArchiveStore::open(url, &options, fast_retry(), "outputDir").unwrap();
        let compact = CompactOptions {
            max_retries: 0,
            ..options_for(Arc::new(store))
        };
        let (outcome, lines) = compact_capturing(&compact);
        assert_degraded(&outcome);
        let everything = format!("{outcome:?} {lines:?}");
        assert!(!everything.contains(SECRET), "{url}: {everything}");
        assert!(
            !everything.contains("U0VDUkVUeno5ZjNiMWMtZG8tbm90LWxlYWs="),
            "{url}: {everything}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints on a store (issue 22): a second process reuses the first one's

/// Two processes on one store: each opens it itself and holds nothing in memory. The second
/// one's list starts with what the first one compacted: it gets the same summary message back,
/// with no summary call, and its result restores to its whole list.
fn checkpoint_shared(open: impl Fn() -> Arc<ArchiveStore>) {
    use context_compact_core::archive::checkpoint::prefix_of_name;
    use context_compact_core::summary::extractive::ExtractiveSummarizer;
    use context_compact_core::summary::summarize::{
        AttemptError, BoxFuture, Summarizer, SummaryRequest,
    };
    struct Refusing;
    impl Summarizer for Refusing {
        fn summarize<'a>(
            &'a self,
            _: &'a SummaryRequest<'a>,
        ) -> BoxFuture<'a, Result<String, AttemptError>> {
            panic!("the second process must not summarize")
        }
        // The same configuration as the first process's (a checkpoint is reused under the
        // summarizer configuration that wrote it only).
        fn provider(&self) -> &str {
            "extractive"
        }
    }
    let first_store = open();
    let mut options = options_for(first_store.clone());
    options.force = false;
    options.extract_memory = false;
    let history = conversation();
    options.context_token_limit =
        context_compact_core::model::tokens::count_messages(Default::default(), &history) * 100
            / 92
            - 10;
    let first = common::run_with(&history, &options, &ExtractiveSummarizer);
    assert!(
        first.compacted && common::other_warnings(&first).is_empty(),
        "{first:?}"
    );
    let objects = first_store.list(&first_store.key(&["s"]), true).unwrap();
    let checkpoints = objects
        .iter()
        .filter(|o| prefix_of_name(o.key.rsplit('/').next().unwrap()).is_some())
        .count();
    assert_eq!(checkpoints, 1, "one checkpoint object");

    let second_store = open();
    let mut later: Vec<Value> =
        serde_json::from_str(&serde_json::to_string(&history).unwrap()).unwrap();
    later.extend(turns(100, 1));
    let options = CompactOptions {
        archive_store: Some(second_store.clone()),
        ..options
    };
    let second = common::run_with(&later, &options, &Refusing);
    assert!(
        second.compacted && common::other_warnings(&second).is_empty(),
        "{second:?}"
    );
    assert!(second.checkpoint.as_ref().unwrap().reused);
    let message = |outcome: &CompactOutcome| {
        outcome.pieces.iter().find_map(|p| match p {
            context_compact_core::pipeline::Piece::New(m) => {
                Some(serde_json::to_string(m).unwrap())
            }
            _ => None,
        })
    };
    assert_eq!(message(&first), message(&second));
    assert_eq!(session::list_archives(&second_store, "s").unwrap().len(), 1);
    let current = assembled(&later, &second);
    let restored = session::restore_messages(&second_store, &current, "s").unwrap();
    assert_eq!(rebuilt(&current, restored), later);
}

#[test]
fn a_second_process_reuses_a_checkpoint_on_a_file_url() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("shared");
    checkpoint_shared(|| file_store(&root));
}

#[test]
fn a_second_process_reuses_a_checkpoint_on_s3() {
    let Some(moto) = Moto::start(false) else {
        return;
    };
    moto.bucket("shared");
    let endpoint = moto.endpoint();
    checkpoint_shared(|| s3_store("s3://shared/agents", &endpoint));
}
