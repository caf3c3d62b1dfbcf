//! Peak heap of one compaction on a JSON message list, by stage (a counting allocator; the
//! summarizer answers at once but reads the rendered prompt, like an HTTP provider would).
//!
//! `cargo run --release -p context-compact-core --example profile_compact -- conversation.json [warmup.json]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use context_compact_core::model::message;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::pipeline::NoHooks;
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, NoObserver, Summarizer, SummaryRequest,
};
use tokio_util::sync::CancellationToken;

struct Counting;
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size() as isize;
        let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(now, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static BASE: AtomicIsize = AtomicIsize::new(0);

fn mark(label: &str) {
    let base = BASE.load(Ordering::Relaxed);
    let now = CURRENT.load(Ordering::Relaxed) - base;
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!(
        "{label:<34} live {:>6.2} MB   peak {:>6.2} MB",
        now as f64 / 1e6,
        peak as f64 / 1e6
    );
}

struct Instant;

impl Summarizer for Instant {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        mark(&format!(
            "in summarizer (prompt {} KB)",
            request.prompt.len() / 1000
        ));
        Box::pin(async move { Ok("summary".to_string()) })
    }
    fn provider(&self) -> &str {
        "custom"
    }
}

fn main() {
    let file = std::env::args().nth(1).expect("conversation.json");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = CompactOptions {
        force: true,
        output_dir: dir.path().to_path_buf(),
        session_id: "profile".into(),
        ..Default::default()
    };
    let compact = |messages: &[serde_json::Value]| {
        runtime
            .block_on(context_compact_core::compact_with_hooks(
                messages,
                None,
                &options,
                &Instant,
                &CancellationToken::new(),
                &NoObserver,
                &NoHooks,
            ))
            .unwrap()
    };
    if let Some(warmup) = std::env::args().nth(2) {
        compact(&message::parse_list(&std::fs::read_to_string(warmup).unwrap()).unwrap());
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let json_bytes = text.len() as isize;
    BASE.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
    PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
    println!("JSON {:.2} MB (not counted)", json_bytes as f64 / 1e6);
    let messages = message::parse_list(&text).unwrap();
    mark("parsed");
    let outcome = compact(&messages);
    assert!(outcome.compacted);
    mark("compacted");
    drop(messages);
    mark("messages dropped");
    let peak = PEAK.load(Ordering::Relaxed) - BASE.load(Ordering::Relaxed);
    println!("peak ÷ JSON = {:.2}", peak as f64 / json_bytes as f64);
}
